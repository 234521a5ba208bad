/* Minimal libmunge stand-in for the static libpmix: its psec/munge component references
 * three munge symbols but Debian ships no static libmunge. munge_encode() failing makes
 * that component unavailable at init, so PMIx uses its "native" security (uid/gid of the
 * client), which is what hq registers its clients with. */
#include <stddef.h>
#include <sys/types.h>

typedef int munge_err_t;
typedef struct munge_ctx *munge_ctx_t;

enum { kMungeSnafu = 1 }; /* EMUNGE_SNAFU: "internal error" */

munge_err_t munge_encode(char **cred, munge_ctx_t ctx, const void *buf, int len) {
  (void)ctx; (void)buf; (void)len;
  if (cred) *cred = NULL;
  return kMungeSnafu;
}

munge_err_t munge_decode(const char *cred, munge_ctx_t ctx, void **buf, int *len, uid_t *uid, gid_t *gid) {
  (void)cred; (void)ctx; (void)uid; (void)gid;
  if (buf) *buf = NULL;
  if (len) *len = 0;
  return kMungeSnafu;
}

const char *munge_strerror(munge_err_t e) {
  (void)e;
  return "munge is not available in this static build";
}
