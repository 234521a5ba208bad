/* Minimal libudev stand-in for the static hwloc: Debian's libhwloc.a references a few
 * udev symbols but no static libudev exists. udev_new() returning NULL makes hwloc fall
 * back to reading sysfs directly, which is all hq needs. */
#include <stddef.h>

struct udev;
struct udev_device;

struct udev *udev_new(void) { return NULL; }
struct udev *udev_unref(struct udev *u) { (void)u; return NULL; }
struct udev_device *udev_device_new_from_subsystem_sysname(struct udev *u, const char *s, const char *n) {
  (void)u; (void)s; (void)n; return NULL;
}
const char *udev_device_get_property_value(struct udev_device *d, const char *k) {
  (void)d; (void)k; return NULL;
}
struct udev_device *udev_device_unref(struct udev_device *d) { (void)d; return NULL; }
