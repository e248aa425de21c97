// double free of a small object: freed twice in a row
#include "misuse.h"

int main(void) { return double_free(MISUSE_SMALL, 0, "double free (small)"); }
