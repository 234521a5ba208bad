// Fuzz: the frame decoder and message decoding (what a daemon does with network bytes),
// squeue's split of a reply's records against protobuf's own parse, and the same bytes as
// a journal event and as a state snapshot (what a restart reads).
#include <string>

#include "hq.pb.h"
#include "net/convert.hpp"
#include "net/frame.hpp"
#include "net/wire_read.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  hq::net::FrameDecoder decoder(1 << 16);
  size_t pos = 0;
  size_t chunk = size > 0 ? (data[0] % 7) + 1 : 1;  // feed in uneven pieces
  while (pos < size) {
    size_t n = std::min(chunk, size - pos);
    decoder.feed(reinterpret_cast<const char*>(data + pos), n);
    pos += n;
    while (true) {
      auto frame = decoder.next();
      if (!frame || !frame->has_value()) break;
      hq::pb::Envelope env;
      bool parsed = env.ParseFromString(**frame);
      if (parsed && env.has_submit()) (void)hq::validate_spec(hq::net::from_pb(env.submit().spec()));
      // squeue's reading of a reply without its job records (net/wire_read): where it and
      // protobuf both take the frame, they agree on its records and on the rest.
      if (auto parts = hq::net::split_queue_reply(**frame); parts && parsed) {
        int records = env.has_queue_reply() ? env.queue_reply().jobs_size() : 0;
        if (static_cast<int>(parts->jobs.size()) != records) __builtin_trap();
        for (int i = 0; i < records; ++i) {
          hq::pb::Job job;
          std::string_view bytes = parts->jobs[static_cast<size_t>(i)];
          if (!job.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
              job.SerializeAsString() != env.queue_reply().jobs(i).SerializeAsString())
            __builtin_trap();
        }
        bool listed = env.has_queue_reply() && env.queue_reply().has_listing();
        if (listed != parts->listing.has_value() || (listed && *parts->listing != env.queue_reply().listing()))
          __builtin_trap();
        if (env.has_queue_reply()) env.mutable_queue_reply()->clear_jobs(), env.mutable_queue_reply()->clear_listing();
        if (parts->rest.SerializeAsString() != env.SerializeAsString()) __builtin_trap();
      }
      if (env.has_job_ended()) (void)hq::net::from_pb(env.job_ended());
      (void)hq::net::decode_event(**frame);
      hq::ClusterState state;
      (void)hq::net::restore_snapshot(**frame, state);
    }
    if (!decoder.next()) break;  // oversized: the connection would be closed
  }
  return 0;
}
