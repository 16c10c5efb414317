#include <stddef.h>

/// Bytes the C allocator has handed out and not yet taken back (glibc's `mallinfo2().uordblks`), or 0 elsewhere.
size_t heap_bytes_in_use(void);
