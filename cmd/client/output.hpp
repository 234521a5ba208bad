// Shared output helpers for client commands: Slurm-style fixed-width fields, JSON
// (the proto3 JSON mapping) and uniform error lines. Single-threaded CLI use.
#pragma once
#include <google/protobuf/message_lite.h>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/status.hpp"

namespace hq::cmd {

// `text` on stdout as it is: through stdio while the C++ streams are not built (building
// them costs a one-shot command 0.2 ms: core/std_streams.hpp), through hq::cout() once
// they are (where a test may have redirected it).
void print_text(std::string_view text);
// Prints the first `bytes` bytes of the file `fd` (a listing the controller passed) as
// print_text would, after what is printed before: copied by the kernel (sendfile), or read
// and written where it cannot. The file's own offset is left alone. An error names what
// failed (a file shorter than `bytes` included).
Status print_file(int fd, uint64_t bytes);
// Text made with << as an ostream would make it, into a string, with no stream (so no C++
// locale or standard stream is built: print_text() prints it). Strings, characters and
// integers only: anything else fails to compile rather than print differently.
class TextOut {
 public:
  TextOut& operator<<(std::string_view s) {
    text_ += s;
    return *this;
  }
  TextOut& operator<<(char c) {
    text_ += c;
    return *this;
  }
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, char> &&
                                                      !std::is_same_v<Int, bool>>>
  TextOut& operator<<(Int n) {
    text_ += std::to_string(n);
    return *this;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};
// A field like Slurm's "%.8j": truncated to `width`, right-aligned when `right`.
std::string field(const std::string& value, int width, bool right = true);
// Prints `msg` in the proto3 JSON mapping; false (with a line on stderr) when it cannot.
[[nodiscard]] bool print_json(const google::protobuf::MessageLite& msg);
// The same tree as YAML, in Slurm's style (cmd/client/slurm_yaml.hpp; 64-bit integers are
// strings there, as in the JSON mapping).
[[nodiscard]] bool print_yaml(const google::protobuf::MessageLite& msg);
// Prints "<prog>: error: <line>" to stderr for each line of the message and returns 1.
int fail(const std::string& prog, const Status& status);
// A command line that did not parse: getopt's own complaints (an unknown or ambiguous option,
// a missing argument, core/cli_options' is_getopt_message) as getopt prints them,
// "PROG: unrecognized option '--x'", then Slurm's hint 'Try "PROG --help" for more
// information', returning `getopt_code` (Slurm's sbatch, srun and salloc exit 255); any other error
// as fail() prints it, returning 1.
int option_failure(const std::string& prog, const Status& status, int getopt_code = 1);
// `ctx` before the last line of a message only: a refusal for an accounting limit is two
// lines, the limit ("AssocMaxSubmitJobLimit") then what failed (Slurm prints them so).
Status context_last_line(const Status& status, const std::string& ctx);
std::string prog_name(const std::string& argv0);
// What the Slurm personas print for -V/--version: the Slurm release whose behaviour hq
// follows, and hq's own ("slurm 22.05.8 (hq 0.1.0)").
std::string persona_version();
// `s` with every byte sequence that is not UTF-8 replaced by U+FFFD (JSON holds text only).
std::string utf8_or_replacement(const std::string& s);
// Slurm's print_date() on stdout: the date line of -l and -i listings ("Tue Nov 24 20:34:17 2026").
void print_date();
// Local wall-clock time "YYYY-MM-DDTHH:MM:SS" (Slurm prints local times), and the local
// offset from UTC in seconds at `now`.
std::string local_time(int64_t t);
int64_t local_utc_offset(int64_t now);

}  // namespace hq::cmd
