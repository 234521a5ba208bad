// Exceptions in the static binaries at the cost they have in dynamic ones. A static link
// starts with crtbeginT.o, which registers the whole binary's .eh_frame with libgcc
// (__register_frame_info); libgcc 12 then sorts every FDE of it at the first exception the
// process throws: hq's 2 MB of .eh_frame took 20 ms (80% of an `srun -N1 true` from outside
// an allocation, whose link to the job's node ends with an exception). The link (CMakeLists.txt,
// hq_static_link) wraps both calls to these no-ops and asks for an .eh_frame_hdr, whose
// sorted table libgcc finds through dl_iterate_phdr, as in a dynamic executable: a lookup
// is a binary search, nothing is sorted at run time. Linked into each static executable
// (not hq_cmd: a library member would never be pulled in by the wrapped weak reference).
// Called once by the C runtime before main and after exit, on the main thread.
struct object;  // libgcc's

// How many registrations were skipped (crtbeginT's one): tests/cmd/static_unwind_test.cpp.
extern "C" {
int hq_frame_registrations_skipped = 0;
}

extern "C" void __wrap___register_frame_info(const void* /*begin*/, struct object* /*ob*/) {
  ++hq_frame_registrations_skipped;
}

extern "C" void* __wrap___deregister_frame_info(const void* /*begin*/) { return nullptr; }
