// jemalloc's options for the four servers and the refresher, compiled only
// into binaries that link jemalloc (gpuadvisor_server_allocator in the top
// CMakeLists.txt).
//
// background_thread: freed pages are returned to the kernel by jemalloc's own
// thread after the decay time, instead of only when some later malloc or
// free in the same arena happens to trigger the purge. A catalog service
// loading 100,000 offers frees a few hundred MB of parse buffers and then
// mostly idles: without it it kept them resident (307 MB after start-up,
// 206 MB with it); the followers do the same with each snapshot they
// reassemble and validate.
//
// thp:always: jemalloc asks for transparent huge pages (2 MB) for its memory
// (madvise; the kernel's default "madvise" mode grants them only to who
// asks). A refresh of 100,000 offers makes every process build and drop a few
// hundred MB of messages, and the pages background_thread returned between
// refreshes are faulted in again 4 KB at a time: on the 2-core VM of the
// benchmarks a page fault costs about 10 us, and faults were a quarter to a
// third of the CPU a refresh cost in each process (the refresher: 103,000
// faults, 1.0 of its 3.3 CPU s). With huge pages the refresher takes 3,300
// faults and the CPU per refresh of the refresher, the catalog, pricing and
// the gateway falls by 30-60% (docs/performance.md, "Session 6"); the
// gateway's CPU per cold Recommend did not rise. The price: about 10-30% more
// resident memory per process (partly used 2 MB pages). MALLOC_CONF in the
// environment still applies on top of this (MALLOC_CONF=thp:default turns
// it off).
extern "C" {
// NOLINTNEXTLINE: the name jemalloc reads.
const char* malloc_conf = "background_thread:true,thp:always";
}
