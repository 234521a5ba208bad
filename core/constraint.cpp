#include "core/constraint.hpp"

#include <algorithm>
#include <cctype>

namespace hq {
namespace {

struct Atom {
  std::string name;
  int32_t count = 0;  // 0: every node
};
using Conj = std::vector<Atom>;
using Dnf = std::vector<Conj>;

constexpr size_t kMaxTerms = 64;

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  Result<Constraint> run() {
    Dnf outer;
    Dnf bracket;
    bool has_bracket = false;
    if (Status s = parse_or(outer, &bracket, &has_bracket); !s) return s;
    if (pos_ != t_.size()) return error("unexpected '" + std::string(1, t_[pos_]) + "'");
    Constraint c;
    if (!has_bracket) {
      auto alt = to_alternative(outer);
      if (!alt) return alt.status();
      c.alternatives.push_back(std::move(alt).value());
      return c;
    }
    if (outer.size() > 1) return error("a [...] group cannot be joined with '|'");
    for (const Conj& option : bracket) {
      Conj both = outer.empty() ? Conj{} : outer.front();
      both.insert(both.end(), option.begin(), option.end());
      auto alt = to_alternative(Dnf{both});
      if (!alt) return alt.status();
      c.alternatives.push_back(std::move(alt).value());
    }
    return c;
  }

 private:
  Status error(const std::string& m) const {
    return invalid("Invalid feature specification: " + std::string(t_) + " (" + m + " at offset " +
                   std::to_string(pos_) + ")");
  }

  bool peek(char c) const { return pos_ < t_.size() && t_[pos_] == c; }

  Status parse_or(Dnf& out, Dnf* bracket, bool* has_bracket) {
    if (Status s = parse_and(out, bracket, has_bracket); !s) return s;
    while (peek('|')) {
      ++pos_;
      Dnf rhs;
      if (Status s = parse_and(rhs, bracket, has_bracket); !s) return s;
      out.insert(out.end(), rhs.begin(), rhs.end());
      if (out.size() > kMaxTerms) return error("too many alternatives");
    }
    return Status::ok();
  }

  Status parse_and(Dnf& out, Dnf* bracket, bool* has_bracket) {
    out = Dnf{Conj{}};
    do {
      if (peek('&')) ++pos_;
      Dnf rhs;
      if (Status s = parse_atom(rhs, bracket, has_bracket); !s) return s;
      Dnf product;
      for (const Conj& a : out) {
        for (const Conj& b : rhs) {
          Conj c = a;
          c.insert(c.end(), b.begin(), b.end());
          product.push_back(std::move(c));
          if (product.size() > kMaxTerms) return error("too many alternatives");
        }
      }
      out = std::move(product);
    } while (peek('&'));
    return Status::ok();
  }

  Status parse_atom(Dnf& out, Dnf* bracket, bool* has_bracket) {
    if (peek('(')) {
      ++pos_;
      if (Status s = parse_or(out, nullptr, nullptr); !s) return s;
      if (!peek(')')) return error("missing ')'");
      ++pos_;
      return Status::ok();
    }
    if (peek('[')) {
      if (!bracket || *has_bracket) return error("only one [...] group, at the top level, is allowed");
      ++pos_;
      if (Status s = parse_or(*bracket, nullptr, nullptr); !s) return s;
      if (!peek(']')) return error("missing ']'");
      ++pos_;
      *has_bracket = true;
      out = Dnf{Conj{}};  // the bracket joins the outer conjunction later
      return Status::ok();
    }
    size_t start = pos_;
    while (pos_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_' ||
                                t_[pos_] == '-' || t_[pos_] == '.' || t_[pos_] == ':'))
      ++pos_;
    if (pos_ == start) return error(pos_ < t_.size() ? "expected a feature name" : "expression ends early");
    Atom a{std::string(t_.substr(start, pos_ - start))};
    if (peek('*')) {
      ++pos_;
      size_t digits = pos_;
      int64_t n = 0;
      while (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_])) && n < 1000000)
        n = n * 10 + (t_[pos_++] - '0');
      if (pos_ == digits || n < 1 || n > 65536) return error("a node count must be 1-65536");
      a.count = static_cast<int32_t>(n);
    }
    out = Dnf{Conj{std::move(a)}};
    return Status::ok();
  }

  Result<ConstraintAlternative> to_alternative(const Dnf& dnf) const {
    ConstraintAlternative alt;
    bool counted = std::any_of(dnf.begin(), dnf.end(), [](const Conj& c) {
      return std::any_of(c.begin(), c.end(), [](const Atom& a) { return a.count > 0; });
    });
    if (!counted) {
      for (const Conj& c : dnf) {
        std::vector<std::string> names;
        for (const Atom& a : c) names.push_back(a.name);
        if (!names.empty()) alt.any_of.push_back(std::move(names));
      }
      return alt;
    }
    if (dnf.size() > 1) return error("node counts (name*N) can only be joined with '&'");
    std::vector<std::string> plain;
    for (const Atom& a : dnf.front()) {
      if (a.count > 0) alt.counts.emplace_back(a.name, a.count);
      else plain.push_back(a.name);
    }
    if (!plain.empty()) {
      alt.any_of.push_back(std::move(plain));
    } else if (alt.counts.size() > 1) {  // [a*2&b*4]: every node comes from one of the counted sets
      for (const auto& [name, n] : alt.counts) alt.any_of.push_back({name});
    }
    return alt;
  }

  std::string_view t_;
  size_t pos_ = 0;
};

}  // namespace

Result<Constraint> parse_constraint(std::string_view text) {
  if (text.empty()) return Constraint{};
  if (text.size() > 1024) return invalid("Invalid feature specification: longer than 1024 characters");
  return Parser(text).run();
}

bool has_feature(const std::vector<std::string>& features, std::string_view f) {
  return std::find(features.begin(), features.end(), f) != features.end();
}

bool node_matches(const ConstraintAlternative& alt, const std::vector<std::string>& features) {
  if (alt.any_of.empty()) return true;
  return std::any_of(alt.any_of.begin(), alt.any_of.end(), [&](const std::vector<std::string>& conj) {
    return std::all_of(conj.begin(), conj.end(), [&](const std::string& f) { return has_feature(features, f); });
  });
}

}  // namespace hq
