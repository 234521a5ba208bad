// YAML as Slurm 22.05 prints it for `--yaml` (its data_parser through libyaml's emitter):
// "%YAML 1.1", a document of block collections where every node carries its tag (`!!map`,
// `!!seq`, `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`), empty collections in flow style
// (`!!seq []`), scalars plain where libyaml would write them plain, else single quoted,
// else double quoted with escapes (every non-ASCII character escaped, `\xE9`), long
// values folded past column 80 as libyaml folds them, and "..." at the end. The tree is
// the same protobuf Struct the `--json` output prints. One thread (a client's).
#pragma once
#include <set>
#include <string>

#include <google/protobuf/struct.pb.h>

#include "cmd/client/slurm_tree.hpp"

namespace hq::cmd {

// The document for `root`; numbers under a key in `float_keys` are written `!!float` with
// six decimals (Slurm's "%f"), the others `!!int`. Keys come in `order` (sorted where it
// names none).
std::string slurm_yaml(const google::protobuf::Struct& root, const std::set<std::string>& float_keys = {},
                       const KeyOrder& order = {});

}  // namespace hq::cmd
