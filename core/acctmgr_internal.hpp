// What core/acctmgr_*.cpp share: the command's context (the model before, the model being
// built, the options, the output) and each verb's entry. Pure; thread-safe.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/acctmgr.hpp"
#include "core/acctmgr_words.hpp"

namespace hq::acctmgr {

struct Ctx {
  const AcctModel& model;  // as it was
  AcctModel next;          // as the command leaves it
  AcctMgrOptions options;
  Io io;
  std::string file_name, file_text;  // dump: the file for the client to write
  AcctListed listed;                 // a list's records (options.records)
  // Records a listed association (as it applies) when options.records.
  void list_assoc_record(const AcctAssoc& shown);
};

void show_it(Ctx& cx, const std::vector<std::string>& args);
// dump CLUSTER [File=NAME]: the cluster's flat file (core/acctmgr_dump.cpp).
void dump_it(Ctx& cx, const std::vector<std::string>& args);
void modify_it(Ctx& cx, const std::vector<std::string>& args);
void delete_it(Ctx& cx, const std::vector<std::string>& args);
void add_qos(Ctx& cx, const std::vector<Word>& words);
void modify_qos(Ctx& cx, const std::vector<Word>& words);
void delete_qos(Ctx& cx, const std::vector<Word>& words);
void list_qos(Ctx& cx, const std::vector<Word>& words);
// list events: the nodes' spans out of service (core/acctmgr_events.cpp).
void list_events(Ctx& cx, const std::vector<Word>& words);
// A header (unless -n) and a line per row, in `format`'s columns; false (and the error
// printed) for an unknown field.
bool print_rows(Ctx& cx, const std::vector<std::string>& format,
                const std::vector<std::function<std::string(std::string_view)>>& rows);

}  // namespace hq::acctmgr
