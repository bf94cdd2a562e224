// Placeholder entry point; replaced by the subcommand dispatcher.
#include <cstdio>
int main() { std::puts("troupe"); return 0; }
