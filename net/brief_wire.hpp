// squeue's brief job records (net::to_pb_brief) written straight from the domain Job in
// protobuf's wire format: the same bytes as building the pb::Job and serializing it
// (tests/net/brief_wire_test.cpp compares them over random jobs), without the messages,
// their strings and two size passes. The controller's listing of thousands of jobs is then
// one pass that appends bytes. Also the few wire pieces around them (a QueueReply's other
// fields, the Envelope that carries it). Pure; any thread.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.hpp"

namespace hq::net {

// Appends `j`'s brief record, as QueueReply's `jobs` entry (its tag and length first),
// with Job.array_tasks when `array_tasks` is not empty (core/array_rows). Returns the
// record's size with them.
size_t append_brief_job_entry(const Job& j, std::string& out, std::string_view array_tasks = {});
// Appends `j`'s brief record alone (a serialized pb::Job).
void append_brief_job(const Job& j, std::string& out);
// Appends QueueReply's other fields: `now`, `more` and the ids named that exist nowhere.
void append_queue_reply_tail(int64_t now, bool more, const std::vector<uint64_t>& unknown_ids, std::string& out);
// The start of a serialized Envelope {seq, queue_reply} whose QueueReply, `reply_size`
// bytes, follows it.
std::string queue_reply_envelope_head(uint64_t seq, size_t reply_size);
// Room to leave at the start of a buffer for a QueueReply's frame: the frame's length and
// the Envelope's head (at most 4 + 11 + 1 + 10 bytes).
constexpr size_t kQueueReplyHeadRoom = 32;
// `buf` holds kQueueReplyHeadRoom bytes of room, then a serialized QueueReply: writes the
// frame's length and the Envelope's head into the end of that room, and returns where the
// frame starts (Connection::send_frame), so that a long reply goes out of the buffer it
// was written in, without a second one.
size_t frame_queue_reply_in_place(uint64_t seq, std::string& buf);
// The same for a QueueReply that starts at `reply_from` (at least kQueueReplyHeadRoom).
size_t frame_queue_reply_in_place(uint64_t seq, std::string& buf, size_t reply_from);
// Room to leave before a listing's text (QueueReply.listing) for its tag and length.
constexpr size_t kListingHeadRoom = 6;
// `buf` holds QueueReply.listing's text from `text_from` to its end, with kListingHeadRoom
// bytes of room before it: writes the field's tag and length at the end of that room and
// returns where they start (where the QueueReply starts, its other fields appended after).
size_t put_listing_head(std::string& buf, size_t text_from);
// The whole Envelope in one string (head and reply).
std::string envelope_with_queue_reply(uint64_t seq, std::string_view reply);

}  // namespace hq::net
