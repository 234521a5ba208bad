// The parts every v0.0.43 document shares (cmd/rest/v0043.hpp): Slurm's "no_val" numbers
// ({"set", "infinite", "number"}), and the envelope's end ("meta", "errors", "warnings").
// One thread (the controller's loop).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/client/json_stream.hpp"
#include "cmd/rest/v0043.hpp"

namespace hq::cmd::rest {

// {"set": true, "infinite": false, "number": v}; unset when `set` is false (number 0).
void no_val(JsonStream& j, std::string_view key, int64_t v, bool set = true);
// The same for a limit: infinite when `infinite` ("UNLIMITED").
void no_val_limit(JsonStream& j, std::string_view key, int64_t v, bool infinite);
// A time (seconds since the epoch): unset when 0.
inline void no_val_time(JsonStream& j, std::string_view key, int64_t t) { no_val(j, key, t, t > 0); }
// ["A", "B"]: a list of strings (empty: []).
void strings(JsonStream& j, std::string_view key, const std::vector<std::string>& items);
// "meta", "errors" and "warnings", then the root's end.
void finish(JsonStream& j, const RestMeta& meta, const std::vector<RestError>& errors = {},
            const std::vector<std::string>& warnings = {});

}  // namespace hq::cmd::rest
