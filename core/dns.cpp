#include "core/dns.hpp"

#include <algorithm>
#include <tuple>

namespace hq {
namespace {

constexpr uint16_t kTypeSrv = 33, kClassIn = 1;

void put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

class Reader {
 public:
  explicit Reader(std::string_view msg) : msg_(msg) {}
  bool u16(size_t at, uint16_t& v) const {
    if (at + 2 > msg_.size()) return false;
    v = static_cast<uint16_t>((static_cast<uint8_t>(msg_[at]) << 8) | static_cast<uint8_t>(msg_[at + 1]));
    return true;
  }
  // A possibly compressed name at `at`; `next` is where the record continues.
  Status name(size_t at, std::string& out, size_t& next) const {
    out.clear();
    bool jumped = false;
    for (int hops = 0; hops < 64; ++hops) {
      if (at >= msg_.size()) return invalid("DNS name runs past the message");
      uint8_t len = static_cast<uint8_t>(msg_[at]);
      if ((len & 0xc0) == 0xc0) {
        uint16_t ptr;
        if (!u16(at, ptr)) return invalid("truncated DNS name pointer");
        if (!jumped) next = at + 2;
        jumped = true;
        at = ptr & 0x3fff;
        continue;
      }
      if (len & 0xc0) return invalid("bad DNS label type");
      if (len == 0) {
        if (!jumped) next = at + 1;
        return out.size() > 253 ? invalid("DNS name too long") : Status::ok();
      }
      if (at + 1 + len > msg_.size()) return invalid("DNS label runs past the message");
      if (!out.empty()) out += '.';
      out.append(msg_.substr(at + 1, len));
      at += 1 + len;
    }
    return invalid("DNS name pointers loop");
  }

 private:
  std::string_view msg_;
};

}  // namespace

Result<std::string> build_srv_query(uint16_t id, std::string_view name) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  if (name.empty() || name.size() > 253) return invalid("bad DNS name '" + std::string(name) + "'");
  std::string out;
  put16(out, id);
  put16(out, 0x0100);  // standard query, recursion desired
  put16(out, 1);       // one question
  put16(out, 0);
  put16(out, 0);
  put16(out, 0);
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    std::string_view label = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || label.size() > 63) return invalid("bad DNS name '" + std::string(name) + "'");
    out.push_back(static_cast<char>(label.size()));
    out.append(label);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  out.push_back('\0');
  put16(out, kTypeSrv);
  put16(out, kClassIn);
  return out;
}

Result<std::vector<SrvRecord>> parse_srv_response(std::string_view msg, uint16_t id) {
  Reader r(msg);
  uint16_t got_id, flags, questions, answers;
  if (!r.u16(0, got_id) || !r.u16(2, flags) || !r.u16(4, questions) || !r.u16(6, answers) || msg.size() < 12)
    return invalid("truncated DNS response");
  if (got_id != id) return invalid("DNS response to another query");
  if (!(flags & 0x8000)) return invalid("not a DNS response");
  if (flags & 0x0200) return invalid("truncated DNS response (TC)");
  if (int rcode = flags & 0x000f; rcode != 0)
    return invalid(rcode == 3 ? "no such DNS name (NXDOMAIN)" : "DNS error code " + std::to_string(rcode));
  size_t at = 12;
  std::string name;
  for (uint16_t q = 0; q < questions; ++q) {
    if (Status s = r.name(at, name, at); !s) return s;
    at += 4;
  }
  std::vector<SrvRecord> out;
  for (uint16_t a = 0; a < answers; ++a) {
    if (Status s = r.name(at, name, at); !s) return s;
    uint16_t type, cls, len;
    if (!r.u16(at, type) || !r.u16(at + 2, cls) || !r.u16(at + 8, len)) return invalid("truncated DNS record");
    size_t data = at + 10;
    if (data + len > msg.size()) return invalid("DNS record runs past the message");
    at = data + len;
    if (type != kTypeSrv || cls != kClassIn) continue;  // e.g. a CNAME on the way
    SrvRecord rec;
    size_t after = 0;
    if (len < 7 || !r.u16(data, rec.priority) || !r.u16(data + 2, rec.weight) || !r.u16(data + 4, rec.port))
      return invalid("short SRV record");
    if (Status s = r.name(data + 6, rec.target, after); !s) return s;
    if (rec.target.empty() || rec.port == 0) continue;  // "." target: the service is not offered
    out.push_back(std::move(rec));
  }
  std::stable_sort(out.begin(), out.end(), [](const SrvRecord& a, const SrvRecord& b) {
    return std::tie(a.priority, b.weight) < std::tie(b.priority, a.weight);
  });
  return out;
}

}  // namespace hq
