// scontrol's commands, options and `show` entities, every one Slurm 22.05's `scontrol
// --help` names, with what hq does with each: it works, it is taken and changes nothing
// (why), or it is refused (why). One table: the dispatcher (cmd/client/scontrol.cpp) looks
// words up here, docs/slurm-compat.md lists them, and tests check both against Slurm's
// help text. Pure; thread-safe.
#pragma once
#include <span>
#include <string_view>

namespace hq {

enum class ScontrolSupport { kWorks, kInert, kRefused };

struct ScontrolEntry {
  std::string_view name;     // as Slurm's help spells it ("requeuehold", "assoc_mgr", "-o, --oneliner")
  ScontrolSupport support;
  std::string_view why;      // for kInert and kRefused: why, in a few words
};

std::span<const ScontrolEntry> scontrol_commands();
std::span<const ScontrolEntry> scontrol_show_entities();
std::span<const ScontrolEntry> scontrol_options();

// The command or entity a word names, as scontrol reads it: in any case, whole or cut to
// a prefix of at least 3 letters that no other name shares ("sho job"); null when none.
const ScontrolEntry* find_scontrol_command(std::string_view word);
const ScontrolEntry* find_scontrol_entity(std::string_view word);
// The option an argument is ("-o", "--oneliner", "--cluster=x", "-Mx"); null when none.
const ScontrolEntry* find_scontrol_option(std::string_view arg);

}  // namespace hq
