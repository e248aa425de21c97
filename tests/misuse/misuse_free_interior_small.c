// free of a pointer into the middle of a small object (64 bytes, freed at +32)
#include "misuse.h"

int main(void) { return free_inside(64, 32, "free of an interior pointer (small)"); }
