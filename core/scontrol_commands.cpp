#include "core/scontrol_commands.hpp"

#include <array>
#include <cctype>

namespace hq {
namespace {

using S = ScontrolSupport;

constexpr std::array kCommands{
    ScontrolEntry{"abort", S::kRefused, "the controller stops on SIGTERM from its service manager; it never dumps core on request"},
    ScontrolEntry{"all", S::kInert, "hq has no hidden partitions"},
    ScontrolEntry{"cancel_reboot", S::kRefused, "hq does not reboot nodes"},
    ScontrolEntry{"cluster", S::kInert, "hq is one cluster"},
    ScontrolEntry{"completing", S::kInert, "hq frees a node when its job ends: no job is ever COMPLETING"},
    ScontrolEntry{"create", S::kWorks, ""},
    ScontrolEntry{"details", S::kInert, "show prints every detail hq has already"},
    ScontrolEntry{"delete", S::kWorks, ""},
    ScontrolEntry{"errnumstr", S::kRefused, "hq's errors are words, not Slurm error numbers"},
    ScontrolEntry{"exit", S::kWorks, ""},
    ScontrolEntry{"fsdampeningfactor", S::kRefused, "set fairshare_dampening_factor in [scheduler] of the config file, then scontrol reconfigure"},
    ScontrolEntry{"help", S::kWorks, ""},
    ScontrolEntry{"hold", S::kWorks, ""},
    ScontrolEntry{"holdu", S::kWorks, ""},
    ScontrolEntry{"hide", S::kInert, "hq has no hidden partitions"},
    ScontrolEntry{"listpids", S::kWorks, ""},
    ScontrolEntry{"notify", S::kWorks, ""},
    ScontrolEntry{"oneliner", S::kInert, "alone it changes nothing; -o before a command prints one line per record"},
    ScontrolEntry{"pidinfo", S::kRefused, "not built: scontrol listpids on the node lists each job's processes"},
    ScontrolEntry{"ping", S::kWorks, ""},
    ScontrolEntry{"quiet", S::kInert, "scontrol says nothing on success already"},
    ScontrolEntry{"quit", S::kWorks, ""},
    ScontrolEntry{"reboot", S::kRefused, "hq does not reboot nodes"},
    ScontrolEntry{"reconfigure", S::kWorks, ""},
    ScontrolEntry{"release", S::kWorks, ""},
    ScontrolEntry{"requeue", S::kWorks, ""},
    ScontrolEntry{"requeuehold", S::kWorks, ""},
    ScontrolEntry{"resume", S::kWorks, ""},
    ScontrolEntry{"setdebug", S::kRefused, "the controller's log detail is fixed when it starts"},
    ScontrolEntry{"setdebugflags", S::kRefused, "the controller's log detail is fixed when it starts"},
    ScontrolEntry{"schedloglevel", S::kRefused, "the scheduler logs with the controller, fixed when it starts"},
    ScontrolEntry{"show", S::kWorks, ""},
    ScontrolEntry{"shutdown", S::kRefused, "daemons are stopped by their service manager (hq local stop for a local cluster)"},
    ScontrolEntry{"suspend", S::kWorks, ""},
    ScontrolEntry{"top", S::kWorks, ""},
    ScontrolEntry{"token", S::kWorks, ""},
    ScontrolEntry{"takeover", S::kRefused, "hq has no backup controller"},
    ScontrolEntry{"uhold", S::kWorks, ""},
    ScontrolEntry{"update", S::kWorks, ""},
    ScontrolEntry{"verbose", S::kInert, "scontrol says nothing more"},
    ScontrolEntry{"version", S::kWorks, ""},
    ScontrolEntry{"wait_job", S::kWorks, ""},
    ScontrolEntry{"write", S::kWorks, ""},
    // Not in 22.05's help, in newer Slurm's and in hq's.
    ScontrolEntry{"liststeps", S::kWorks, ""},
    ScontrolEntry{"listjobs", S::kWorks, ""},
};

constexpr std::array kEntities{
    ScontrolEntry{"aliases", S::kInert, "hq nodes have no NodeAddr aliases"},
    ScontrolEntry{"assoc_mgr", S::kWorks, ""},
    ScontrolEntry{"bbstat", S::kInert, "hq has no burst buffers"},
    ScontrolEntry{"burstBuffer", S::kInert, "hq has no burst buffers"},
    ScontrolEntry{"config", S::kWorks, ""},
    ScontrolEntry{"daemons", S::kRefused, "not built: hq local status lists a local cluster's daemons"},
    ScontrolEntry{"dwstat", S::kInert, "hq has no burst buffers"},
    ScontrolEntry{"federation", S::kInert, "hq is one cluster"},
    ScontrolEntry{"frontend", S::kInert, "hq has no front end nodes"},
    ScontrolEntry{"hostlist", S::kWorks, ""},
    ScontrolEntry{"hostlistsorted", S::kWorks, ""},
    ScontrolEntry{"hostnames", S::kWorks, ""},
    ScontrolEntry{"job", S::kWorks, ""},
    ScontrolEntry{"licenses", S::kInert, "hq tracks no licenses"},
    ScontrolEntry{"node", S::kWorks, ""},
    ScontrolEntry{"partition", S::kWorks, ""},
    ScontrolEntry{"reservation", S::kWorks, ""},
    ScontrolEntry{"slurmd", S::kRefused, "not built: hq nodes and scontrol show node show each agent"},
    ScontrolEntry{"step", S::kWorks, ""},
    ScontrolEntry{"topology", S::kWorks, ""},
};

constexpr std::array kOptions{
    ScontrolEntry{"-a, --all", S::kInert, "hq has no hidden partitions"},
    ScontrolEntry{"-d, --details", S::kInert, "show prints every detail hq has already"},
    ScontrolEntry{"--federation", S::kInert, "hq is one cluster"},
    ScontrolEntry{"-F, --future", S::kInert, "hq has no nodes in the FUTURE state"},
    ScontrolEntry{"-h, --help", S::kWorks, ""},
    ScontrolEntry{"--hide", S::kInert, "hq has no hidden partitions"},
    ScontrolEntry{"--local", S::kInert, "hq is one cluster"},
    ScontrolEntry{"-M, --cluster", S::kInert, "hq is one cluster"},
    ScontrolEntry{"-o, --oneliner", S::kWorks, ""},
    ScontrolEntry{"-Q, --quiet", S::kInert, "scontrol says nothing on success already"},
    ScontrolEntry{"--sibling", S::kInert, "hq is one cluster"},
    ScontrolEntry{"-u, --uid", S::kRefused, "hq acts as the caller only: its token says who that is"},
    ScontrolEntry{"-v, --verbose", S::kInert, "scontrol says nothing more"},
    ScontrolEntry{"-V, --version", S::kWorks, ""},
};

bool same_letters(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

template <size_t N>
const ScontrolEntry* find_in(const std::array<ScontrolEntry, N>& table, std::string_view word) {
  for (const auto& e : table)
    if (same_letters(e.name, word)) return &e;
  if (word.size() < 3) return nullptr;
  const ScontrolEntry* found = nullptr;
  for (const auto& e : table) {
    if (e.name.size() < word.size() || !same_letters(e.name.substr(0, word.size()), word)) continue;
    if (found) return nullptr;  // ambiguous
    found = &e;
  }
  return found;
}

}  // namespace

std::span<const ScontrolEntry> scontrol_commands() { return kCommands; }
std::span<const ScontrolEntry> scontrol_show_entities() { return kEntities; }
std::span<const ScontrolEntry> scontrol_options() { return kOptions; }

const ScontrolEntry* find_scontrol_command(std::string_view word) { return find_in(kCommands, word); }
const ScontrolEntry* find_scontrol_entity(std::string_view word) { return find_in(kEntities, word); }

const ScontrolEntry* find_scontrol_option(std::string_view arg) {
  for (const auto& e : kOptions) {
    std::string_view forms = e.name;  // "-a, --all" or "--hide"
    while (!forms.empty()) {
      size_t comma = forms.find(", ");
      std::string_view form = forms.substr(0, comma);
      forms = comma == std::string_view::npos ? std::string_view{} : forms.substr(comma + 2);
      bool with_value = arg.size() > form.size() && arg.substr(0, form.size()) == form &&
                        (arg[form.size()] == '=' || form.size() == 2);  // --cluster=x, -Mx
      if (arg == form || with_value) return &e;
    }
  }
  return nullptr;
}

}  // namespace hq
