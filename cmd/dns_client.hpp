// Controller discovery through DNS: the SRV record `_hq._tcp.<domain>` (RFC 2782). The
// domain is HQ_SRV_DOMAIN, else resolv.conf's `domain` or first `search` entry; the
// server is HQ_DNS_SERVER (HOST:PORT), else resolv.conf's first `nameserver`. One UDP
// query with a 2 s timeout. Blocking; any thread.
#pragma once
#include "core/status.hpp"
#include "net/client.hpp"

namespace hq::cmd {

Result<net::Endpoint> controller_from_srv();

}  // namespace hq::cmd
