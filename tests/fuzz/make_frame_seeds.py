#!/usr/bin/env python3
"""Writes seed frames for fuzz_frame: valid length-prefixed Envelopes (hand-encoded
protobuf, no protobuf module needed) plus truncated and oversized headers."""
import os, struct, sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

def varint(n):
    b = b""
    while True:
        if n < 0x80:
            return b + bytes([n])
        b += bytes([(n & 0x7F) | 0x80])
        n >>= 7

def field(num, wire, payload):
    key = varint(num << 3 | wire)
    return key + (varint(len(payload)) + payload if wire == 2 else payload)

def frame(msg):
    return struct.pack(">I", len(msg)) + msg

hello = field(2, 2, field(1, 0, varint(1)) + field(2, 0, varint(1)) + field(3, 2, b"client"))
spec = field(1, 2, b"job") + field(2, 2, b"#!/bin/sh\ntrue\n") + field(13, 0, varint(1)) + field(16, 0, varint(1)) + field(19, 0, varint(1))
submit = field(1, 0, varint(7)) + field(10, 2, field(1, 2, spec))
ended = field(34, 2, field(1, 0, varint(3)) + field(2, 2, b"COMPLETED"))
# A state snapshot (what a restart reads; the target also feeds each frame to
# restore_snapshot): a job referring to a shared script and environment, a drained node.
job = field(1, 0, varint(3)) + field(2, 2, field(1, 2, b"job")) + field(3, 2, b"PENDING") + field(6, 2, b"batch") + \
    field(30, 0, varint(1)) + field(31, 0, varint(1))
snapshot = field(1, 0, varint(9)) + field(2, 2, job) + field(3, 2, field(1, 2, b"n1") + field(3, 0, varint(1))) + \
    field(4, 2, b"#!/bin/sh\ntrue\n") + field(5, 2, field(1, 2, b"HOME=/root"))
# squeue's answer: an Envelope (seq 2) whose QueueReply (13) holds two job records, now,
# more and an unknown id.
queue_reply = field(1, 0, varint(2)) + field(13, 2, field(1, 2, job) + field(1, 2, job) + field(2, 0, varint(1795858035)) +
                                                    field(3, 0, varint(1)) + field(4, 2, varint(77)))
# The same answer as text the controller made (QueueReply.listing, 6), now and an unknown id.
queue_listing = field(1, 0, varint(2)) + field(13, 2, field(6, 2, b"JOBID PARTITION NAME\n1 batch c\n") +
                                                      field(2, 0, varint(1795858035)) + field(4, 2, varint(77)))
seeds = {
    "hello": frame(hello),
    "submit": frame(hello) + frame(submit),
    "ended": frame(ended),
    "snapshot": frame(snapshot),
    "queue_reply": frame(queue_reply),
    "queue_listing": frame(queue_listing),
    "truncated": frame(submit)[:9],
    "oversized": struct.pack(">I", 0x7FFFFFFF) + b"x",
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
