// An SQLite VFS over the default one that counts xSync calls on files whose name ends in a
// given suffix ("-wal"), for tests of what a commit makes durable. Install it as the default
// VFS with install(); uninstall() puts the previous one back. Not thread-safe: one test at a time.
#pragma once
#include <atomic>
#include <cstring>
#include <sqlite3.h>
#include <string>

namespace hq::test {

class SyncCountingVfs {
 public:
  explicit SyncCountingVfs(std::string suffix) { suffix_() = std::move(suffix); }
  ~SyncCountingVfs() { uninstall(); }

  bool install() {
    base_() = sqlite3_vfs_find(nullptr);
    if (!base_()) return false;
    vfs_ = *base_();
    vfs_.zName = "hq_sync_counting";
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + base_()->szOsFile;
    vfs_.xOpen = open;
    vfs_.pNext = nullptr;
    installed_ = sqlite3_vfs_register(&vfs_, 1) == SQLITE_OK;
    return installed_;
  }
  void uninstall() {
    if (!installed_) return;
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(base_(), 1);
    installed_ = false;
  }
  static int syncs() { return count_(); }
  static void reset() { count_() = 0; }

 private:
  // Our file: its methods first, the base VFS's file right behind it.
  struct File {
    sqlite3_file base;
    bool counted;
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
  };
  static sqlite3_vfs*& base_() {
    static sqlite3_vfs* v = nullptr;
    return v;
  }
  static std::string& suffix_() {
    static std::string s;
    return s;
  }
  static std::atomic<int>& count_() {
    static std::atomic<int> n{0};
    return n;
  }
  static File* self(sqlite3_file* f) { return reinterpret_cast<File*>(f); }

  static int open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
    File* f = self(file);
    f->base.pMethods = nullptr;
    int rc = base_()->xOpen(base_(), name, f->real(), flags, out_flags);
    if (rc != SQLITE_OK) return rc;
    size_t n = name ? std::strlen(name) : 0;
    const std::string& sfx = suffix_();
    f->counted = n >= sfx.size() && std::memcmp(name + n - sfx.size(), sfx.data(), sfx.size()) == 0;
    f->base.pMethods = methods(f->real()->pMethods);
    return SQLITE_OK;
  }
  // The base file's methods with xSync (and xClose) wrapped; the rest forward.
  static const sqlite3_io_methods* methods(const sqlite3_io_methods* real) {
    static sqlite3_io_methods m;
    static const sqlite3_io_methods* wrapped = nullptr;
    if (wrapped != real) {
      m = *real;
      wrapped = real;
      m.xClose = [](sqlite3_file* f) { return self(f)->real()->pMethods->xClose(self(f)->real()); };
      m.xRead = [](sqlite3_file* f, void* b, int n, sqlite3_int64 o) { return self(f)->real()->pMethods->xRead(self(f)->real(), b, n, o); };
      m.xWrite = [](sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
        return self(f)->real()->pMethods->xWrite(self(f)->real(), b, n, o);
      };
      m.xTruncate = [](sqlite3_file* f, sqlite3_int64 s) { return self(f)->real()->pMethods->xTruncate(self(f)->real(), s); };
      m.xSync = [](sqlite3_file* f, int flags) {
        if (self(f)->counted) ++count_();
        return self(f)->real()->pMethods->xSync(self(f)->real(), flags);
      };
      m.xFileSize = [](sqlite3_file* f, sqlite3_int64* s) { return self(f)->real()->pMethods->xFileSize(self(f)->real(), s); };
      m.xLock = [](sqlite3_file* f, int l) { return self(f)->real()->pMethods->xLock(self(f)->real(), l); };
      m.xUnlock = [](sqlite3_file* f, int l) { return self(f)->real()->pMethods->xUnlock(self(f)->real(), l); };
      m.xCheckReservedLock = [](sqlite3_file* f, int* r) {
        return self(f)->real()->pMethods->xCheckReservedLock(self(f)->real(), r);
      };
      m.xFileControl = [](sqlite3_file* f, int op, void* a) { return self(f)->real()->pMethods->xFileControl(self(f)->real(), op, a); };
      m.xSectorSize = [](sqlite3_file* f) { return self(f)->real()->pMethods->xSectorSize(self(f)->real()); };
      m.xDeviceCharacteristics = [](sqlite3_file* f) {
        return self(f)->real()->pMethods->xDeviceCharacteristics(self(f)->real());
      };
      m.xShmMap = [](sqlite3_file* f, int pg, int sz, int ext, void volatile** p) {
        return self(f)->real()->pMethods->xShmMap(self(f)->real(), pg, sz, ext, p);
      };
      m.xShmLock = [](sqlite3_file* f, int o, int n, int fl) { return self(f)->real()->pMethods->xShmLock(self(f)->real(), o, n, fl); };
      m.xShmBarrier = [](sqlite3_file* f) { self(f)->real()->pMethods->xShmBarrier(self(f)->real()); };
      m.xShmUnmap = [](sqlite3_file* f, int d) { return self(f)->real()->pMethods->xShmUnmap(self(f)->real(), d); };
      m.xFetch = [](sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return self(f)->real()->pMethods->xFetch(self(f)->real(), o, n, p); };
      m.xUnfetch = [](sqlite3_file* f, sqlite3_int64 o, void* p) { return self(f)->real()->pMethods->xUnfetch(self(f)->real(), o, p); };
    }
    return &m;
  }

  sqlite3_vfs vfs_{};
  bool installed_ = false;
};

}  // namespace hq::test
