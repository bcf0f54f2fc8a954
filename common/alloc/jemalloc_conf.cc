// jemalloc's options for the four servers, compiled only into binaries that
// link jemalloc (gpuadvisor_server_allocator in the top CMakeLists.txt).
//
// background_thread: freed pages are returned to the kernel by jemalloc's own
// thread after the decay time, instead of only when some later malloc or
// free in the same arena happens to trigger the purge. A catalog service
// loading 100,000 offers frees a few hundred MB of parse buffers and then
// mostly idles: without it it kept them resident (307 MB after start-up,
// 206 MB with it); the followers do the same with each snapshot they
// reassemble and validate. MALLOC_CONF in the environment still applies on
// top of this.
extern "C" {
// NOLINTNEXTLINE: the name jemalloc reads.
const char* malloc_conf = "background_thread:true";
}
