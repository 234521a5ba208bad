// Slurm 22.05's data_parser trees (squeue/sinfo --json and --yaml) as protobuf Struct values:
// the order of a mapping's keys, which Slurm keeps as it inserted them and a Struct does
// not, and the JSON text as Slurm's json-c serializer prints it (two-space indent, "\/",
// empty collections on two lines, floats with a decimal point, no newline at the end).
// One thread (a client's).
#pragma once
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <google/protobuf/struct.pb.h>

namespace hq::cmd {

// For each key a mapping sits under (a sequence's items sit under the sequence's key; the
// root under ""), its keys in Slurm's order. A list under "GRANDPARENT/PARENT" wins over
// one under "PARENT" (sacct's job and step both have a "tres", in different orders). Keys a
// list does not name come after, sorted; mappings with no list have all their keys sorted.
class KeyOrder {
 public:
  KeyOrder() = default;
  KeyOrder(std::initializer_list<std::pair<const std::string, std::vector<std::string>>> lists);

  std::vector<std::pair<std::string_view, const google::protobuf::Value*>> fields(const google::protobuf::Struct& s,
                                                                                 std::string_view parent,
                                                                                 std::string_view grandparent) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Ranks = std::unordered_map<std::string, size_t, Hash, std::equal_to<>>;  // key -> its place
  std::map<std::string, Ranks, std::less<>> under_;
};

// A Struct being filled: typed setters for its fields (text made valid UTF-8).
class Obj {
 public:
  explicit Obj(google::protobuf::Struct* s) : s_(s) {}
  Obj& str(const std::string& k, const std::string& v);
  Obj& num(const std::string& k, double v);
  Obj& flag(const std::string& k, bool v);
  Obj& null(const std::string& k);
  Obj obj(const std::string& k);
  google::protobuf::ListValue* list(const std::string& k);
  // An item of list `l` that is a mapping.
  static Obj item(google::protobuf::ListValue* l);

 private:
  google::protobuf::Struct* s_;
};

// Slurm's "meta" (its plugin's type and name, the version) and an empty "errors".
void slurm_meta(Obj root, const std::string& plugin_type, const std::string& plugin_name);

// `s` as a JSON string as json-c writes it (quotes, backslash, "\/", controls escaped), onto `out`.
void put_string(std::string& out, std::string_view s);

// The JSON text of `root`; numbers under a key in `float_keys` keep a decimal point ("1.0").
std::string slurm_json_text(const google::protobuf::Struct& root, const KeyOrder& order,
                            const std::set<std::string>& float_keys);

}  // namespace hq::cmd
