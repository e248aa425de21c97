/* The per-class upper bound (2026 paper, §4.3): 16-byte objects allocated and
 * freed in batches, either from an intrusive freelist (the free object's first
 * word links it: no overhead) or from malloc/free. Nothing else is done with the
 * objects but writing and reading them, so the time is the allocator's.
 *
 *   strata-bench-freelist freelist|malloc OPERATIONS
 *   -> contender=NAME operations=N seconds=S checksum=HEX
 *
 * Run under LD_PRELOAD=<allocator> to compare malloc/free of each allocator
 * with the freelist (whose chunks come from the same allocator). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { OBJECT_SIZE = 16, BATCH = 1000, CHUNK_OBJECTS = 4096 };

struct free_object { struct free_object *next; };

/* The per-class allocator: a LIFO freelist refilled from chunks carved by a bump pointer. */
struct freelist {
    struct free_object *head;
    char *bump, *end;
    void **chunks;
    size_t nchunks;
};

static void *freelist_alloc(struct freelist *fl) {
    if (fl->head) {
        struct free_object *o = fl->head;
        fl->head = o->next;
        return o;
    }
    if (fl->bump == fl->end) {
        char *chunk = malloc((size_t)OBJECT_SIZE * CHUNK_OBJECTS);
        void **grown = realloc(fl->chunks, (fl->nchunks + 1) * sizeof *grown);
        if (!chunk || !grown) { perror("strata-bench-freelist"); exit(1); }
        fl->chunks = grown;
        fl->chunks[fl->nchunks++] = chunk;
        fl->bump = chunk;
        fl->end = chunk + (size_t)OBJECT_SIZE * CHUNK_OBJECTS;
    }
    void *p = fl->bump;
    fl->bump += OBJECT_SIZE;
    return p;
}

static void freelist_free(struct freelist *fl, void *p) {
    struct free_object *o = p;
    o->next = fl->head;
    fl->head = o;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "freelist") != 0 && strcmp(argv[1], "malloc") != 0)) {
        fprintf(stderr, "usage: strata-bench-freelist freelist|malloc OPERATIONS\n");
        return 2;
    }
    char *end;
    long long operations = strtoll(argv[2], &end, 10);
    if (*end != '\0' || operations < BATCH) {
        fprintf(stderr, "strata-bench-freelist: OPERATIONS: expected an integer >= %d, got '%s'\n", BATCH, argv[2]);
        return 2;
    }
    int use_freelist = strcmp(argv[1], "freelist") == 0;
    struct freelist fl = {0};
    static uint64_t *batch[BATCH];
    uint64_t checksum = 0;
    double start = now();
    for (long long done = 0; done + BATCH <= operations; done += BATCH) {
        for (int i = 0; i < BATCH; i++) {
            uint64_t *o = use_freelist ? freelist_alloc(&fl) : malloc(OBJECT_SIZE);
            if (!o) { perror("strata-bench-freelist"); return 1; }
            o[0] = (uint64_t)(done + i);
            o[1] = o[0] * 2654435761u;
            batch[i] = o;
        }
        /* Free in an order that interleaves the batch (as a simulation's events die). */
        for (int i = 0; i < BATCH; i++) {
            uint64_t *o = batch[(i * 7) % BATCH];
            checksum += o[0] ^ o[1];
            if (use_freelist) freelist_free(&fl, o); else free(o);
        }
    }
    double seconds = now() - start;
    for (size_t i = 0; i < fl.nchunks; i++) free(fl.chunks[i]);
    free(fl.chunks);
    printf("contender=%s operations=%lld seconds=%.6f checksum=%016llx\n", argv[1], operations, seconds,
           (unsigned long long)checksum);
    return 0;
}
