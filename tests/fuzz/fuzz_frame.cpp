// Fuzz: the frame decoder and message decoding (what a daemon does with network bytes),
// and the same bytes as a journal event and as a state snapshot (what a restart reads).
#include <string>

#include "hq.pb.h"
#include "net/convert.hpp"
#include "net/frame.hpp"

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
      if (env.ParseFromString(**frame) && env.has_submit()) (void)hq::validate_spec(hq::net::from_pb(env.submit().spec()));
      if (env.has_job_ended()) (void)hq::net::from_pb(env.job_ended());
      (void)hq::net::decode_event(**frame);
      hq::ClusterState state;
      (void)hq::net::restore_snapshot(**frame, state);
    }
    if (!decoder.next()) break;  // oversized: the connection would be closed
  }
  return 0;
}
