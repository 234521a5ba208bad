#include "core/sprio_format.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace hq {
namespace {

struct Spec {
  char letter = 0;
  bool right = false;
  int width = 0;
  std::string suffix;  // the text up to the next field
};

std::string default_format(const SprioWeights& w, const SprioOptions& o) {
  if (o.normalized && o.long_list) return "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t";
  if (o.long_list) return "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T";
  std::string f = "%.15i %9r";
  if (o.user_column) f += " %.8u";
  bool n = o.normalized;
  f += n ? " %10y" : " %.10Y %.10S";
  auto add = [&](int64_t weight, char letter) {
    if (weight) f += std::string(n ? " %10" : " %.10") + (n ? static_cast<char>(letter + 32) : letter);
  };
  add(w.age, 'A');
  add(w.assoc, 'B');
  add(w.fairshare, 'F');
  add(w.job_size, 'J');
  add(w.partition, 'P');
  add(w.qos, 'Q');
  return f;
}

// Slurm's parse_format: "%[.][width]letter" fields, each followed by its literal suffix.
Result<std::vector<Spec>> parse(const std::string& format, std::string& prefix) {
  std::vector<Spec> out;
  size_t at = format.find('%');
  prefix = format.substr(0, at);
  while (at != std::string::npos && at < format.size()) {
    Spec s;
    size_t i = at + 1;
    if (i < format.size() && format[i] == '.') s.right = true, ++i;
    size_t digits = i;
    while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i]))) ++i;
    if (i > digits) s.width = static_cast<int>(std::min(4096L, std::strtol(format.substr(digits, i - digits).c_str(), nullptr, 10)));
    if (i >= format.size()) return invalid("Invalid job format specification: " + format.substr(at));
    s.letter = format[i];
    if (std::string_view("iruYySAaBbFfJjPpQqNTtc").find(s.letter) == std::string_view::npos)
      return invalid(std::string("Invalid job format specification: ") + s.letter);
    size_t next = format.find('%', i + 1);
    s.suffix = format.substr(i + 1, next == std::string::npos ? std::string::npos : next - i - 1);
    out.push_back(s);
    at = next;
  }
  return out;
}

// Slurm's _print_str: right-justified "%Ns" cut to N, or "%.Ns" padded to N.
std::string fit(const std::string& text, const Spec& s) {
  if (s.width == 0) return text;
  auto w = static_cast<size_t>(s.width);
  std::string out = text.size() > w ? text.substr(0, w) : text;
  if (out.size() < w) out = s.right ? std::string(w - out.size(), ' ') + out : out + std::string(w - out.size(), ' ');
  return out;
}

std::string whole(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string norm(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.7f", v);
  return buf;
}

const char* header(char letter) {
  switch (letter) {
    case 'i': return "JOBID";
    case 'r': case 'P': case 'p': return "PARTITION";
    case 'u': return "USER";
    case 'Y': case 'y': return "PRIORITY";
    case 'S': return "SITE";
    case 'A': case 'a': return "AGE";
    case 'B': case 'b': return "ASSOC";
    case 'F': case 'f': return "FAIRSHARE";
    case 'J': case 'j': return "JOBSIZE";
    case 'Q': case 'q': return "QOS";
    case 'N': return "NICE";
    case 'T': case 't': return "TRES";
    default: return "CLUSTER";
  }
}

std::string weight_cell(char letter, const SprioWeights& w) {
  switch (letter) {
    case 'i': return "Weights";
    case 'S': return "1";
    case 'A': case 'a': return std::to_string(w.age);
    case 'B': case 'b': return std::to_string(w.assoc);
    case 'F': case 'f': return std::to_string(w.fairshare);
    case 'J': case 'j': return std::to_string(w.job_size);
    case 'P': case 'p': return std::to_string(w.partition);
    case 'Q': case 'q': return std::to_string(w.qos);
    default: return "";
  }
}

std::string job_cell(char letter, const SprioJob& j, const SprioWeights& w) {
  switch (letter) {
    case 'i': return std::to_string(j.id);
    case 'r': return j.partition;
    case 'u': return j.user;
    case 'c': return j.cluster;
    case 'Y': return std::to_string(j.total);
    case 'y': {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%16.14f", static_cast<double>(j.total) / 4294967295.0);
      return buf;
    }
    case 'S': return "0";
    case 'A': return whole(static_cast<double>(w.age) * j.age);
    case 'a': return norm(w.age ? j.age : 0);
    case 'B': return "0";
    case 'b': return norm(0);
    case 'F': return whole(static_cast<double>(w.fairshare) * j.fairshare);
    case 'f': return norm(w.fairshare ? j.fairshare : 0);
    case 'J': return whole(static_cast<double>(w.job_size) * j.job_size);
    case 'j': return norm(w.job_size ? j.job_size : 0);
    case 'P': return whole(static_cast<double>(w.partition) * j.partition_factor);
    case 'p': return norm(w.partition ? j.partition_factor : 0);
    case 'Q': return whole(static_cast<double>(w.qos) * j.qos);
    case 'q': return norm(w.qos ? j.qos : 0);
    case 'N': return std::to_string(j.nice);
    default: return "";  // TRES: no TRES weights
  }
}

template <typename Cell>
void line(std::string& out, const std::string& prefix, const std::vector<Spec>& specs, Cell cell) {
  out += prefix;
  for (const Spec& s : specs) out += fit(cell(s.letter), s) + s.suffix;
  out += '\n';
}

}  // namespace

Result<std::string> render_sprio(const std::vector<SprioJob>& jobs, const SprioWeights& w, const SprioOptions& opt) {
  std::string prefix;
  auto specs = parse(opt.format.empty() ? default_format(w, opt) : opt.format, prefix);
  if (!specs) return specs.status();
  if (opt.jobs_given && jobs.empty() && !opt.weights) return std::string("Unable to find jobs matching user/id(s) specified\n");
  std::string out;
  if (!opt.noheader) line(out, prefix, *specs, [](char l) { return std::string(header(l)); });
  if (opt.weights) {
    line(out, prefix, *specs, [&](char l) { return weight_cell(l, w); });
    return out;
  }
  for (const SprioJob& j : jobs) line(out, prefix, *specs, [&](char l) { return job_cell(l, j, w); });
  return out;
}

}  // namespace hq
