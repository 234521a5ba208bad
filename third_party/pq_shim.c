/* GSSAPI and LDAP stand-ins for Debian's static libpq (the accounting store's PostgreSQL
 * backend): Debian builds libpq with Kerberos and LDAP, but ships neither as a static
 * library. Every call fails, so libpq behaves as one built without them: no GSS
 * encryption or authentication (gss_acquire_cred finding no credentials makes libpq skip
 * GSS encryption under the default gssencmode=prefer, and a server asking for GSS
 * authentication is refused), and no LDAP lookup of connection services. Password, SCRAM
 * and TLS (OpenSSL, linked statically) work as usual. */
#include <stddef.h>
#include <stdint.h>

typedef uint32_t OM_uint32;
typedef void *gss_ptr;

#define HQ_GSS_S_FAILURE (13u << 16)

void *GSS_C_NT_HOSTBASED_SERVICE = NULL;

static OM_uint32 gss_fails(OM_uint32 *minor) {
  if (minor) *minor = 0;
  return HQ_GSS_S_FAILURE;
}

OM_uint32 gss_acquire_cred(OM_uint32 *minor, gss_ptr a, OM_uint32 b, gss_ptr c, int d, gss_ptr *cred, gss_ptr e,
                           OM_uint32 *f) {
  (void)a; (void)b; (void)c; (void)d; (void)e; (void)f;
  if (cred) *cred = NULL;
  return gss_fails(minor);
}
OM_uint32 gss_release_cred(OM_uint32 *minor, gss_ptr *cred) {
  if (cred) *cred = NULL;
  if (minor) *minor = 0;
  return 0;
}
OM_uint32 gss_import_name(OM_uint32 *minor, gss_ptr a, gss_ptr b, gss_ptr *name) {
  (void)a; (void)b;
  if (name) *name = NULL;
  return gss_fails(minor);
}
OM_uint32 gss_release_name(OM_uint32 *minor, gss_ptr *name) {
  if (name) *name = NULL;
  if (minor) *minor = 0;
  return 0;
}
OM_uint32 gss_init_sec_context(OM_uint32 *minor, gss_ptr a, gss_ptr *ctx, gss_ptr b, gss_ptr c, OM_uint32 d,
                               OM_uint32 e, gss_ptr f, gss_ptr g, gss_ptr h, gss_ptr i, OM_uint32 *j, OM_uint32 *k) {
  (void)a; (void)ctx; (void)b; (void)c; (void)d; (void)e; (void)f; (void)g; (void)h; (void)i; (void)j; (void)k;
  return gss_fails(minor);
}
OM_uint32 gss_delete_sec_context(OM_uint32 *minor, gss_ptr *ctx, gss_ptr out) {
  (void)out;
  if (ctx) *ctx = NULL;
  if (minor) *minor = 0;
  return 0;
}
OM_uint32 gss_display_status(OM_uint32 *minor, OM_uint32 a, int b, gss_ptr c, OM_uint32 *more, gss_ptr text) {
  /* text is a gss_buffer_desc {size_t length; void *value;}: left empty. */
  (void)a; (void)b; (void)c;
  if (more) *more = 0;
  if (text) {
    ((size_t *)text)[0] = 0;
    ((void **)text)[1] = NULL;
  }
  if (minor) *minor = 0;
  return 0;
}
OM_uint32 gss_release_buffer(OM_uint32 *minor, gss_ptr buffer) {
  (void)buffer;
  if (minor) *minor = 0;
  return 0;
}
OM_uint32 gss_wrap(OM_uint32 *minor, gss_ptr a, int b, OM_uint32 c, gss_ptr d, int *e, gss_ptr f) {
  (void)a; (void)b; (void)c; (void)d; (void)e; (void)f;
  return gss_fails(minor);
}
OM_uint32 gss_unwrap(OM_uint32 *minor, gss_ptr a, gss_ptr b, gss_ptr c, int *d, OM_uint32 *e) {
  (void)a; (void)b; (void)c; (void)d; (void)e;
  return gss_fails(minor);
}
OM_uint32 gss_wrap_size_limit(OM_uint32 *minor, gss_ptr a, int b, OM_uint32 c, OM_uint32 d, OM_uint32 *e) {
  (void)a; (void)b; (void)c; (void)d; (void)e;
  return gss_fails(minor);
}

/* LDAP: libpq's "ldap://" service lookups. ldap_init() finding no library fails them all. */
void *ldap_init(const char *host, int port) {
  (void)host; (void)port;
  return NULL;
}
int ldap_set_option(void *ld, int option, const void *value) { (void)ld; (void)option; (void)value; return -1; }
int ldap_simple_bind(void *ld, const char *who, const char *password) { (void)ld; (void)who; (void)password; return -1; }
int ldap_result(void *ld, int msgid, int all, void *timeout, void **result) {
  (void)ld; (void)msgid; (void)all; (void)timeout;
  if (result) *result = NULL;
  return -1;
}
int ldap_search_st(void *ld, const char *base, int scope, const char *filter, char **attrs, int attrsonly, void *timeout,
                   void **result) {
  (void)ld; (void)base; (void)scope; (void)filter; (void)attrs; (void)attrsonly; (void)timeout;
  if (result) *result = NULL;
  return -1;
}
int ldap_count_entries(void *ld, void *chain) { (void)ld; (void)chain; return 0; }
void *ldap_first_entry(void *ld, void *chain) { (void)ld; (void)chain; return NULL; }
void **ldap_get_values_len(void *ld, void *entry, const char *attr) { (void)ld; (void)entry; (void)attr; return NULL; }
int ldap_value_free_len(void **vals) { (void)vals; return 0; }
int ldap_msgfree(void *msg) { (void)msg; return 0; }
int ldap_unbind(void *ld) { (void)ld; return 0; }
char *ldap_err2string(int err) { (void)err; return (char *)"LDAP is not available in this static build"; }
