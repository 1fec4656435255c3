// A header passed with -isystem syncs; nothing is reported inside it.
#include <syncing_system_header.h>
float use() { return 0.f; }
