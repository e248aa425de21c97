/* GLib 2.74's GSlice (magazines of per-size slabs, a per-class allocator) under a
 * simulation in the manner of boxed-sim: records of six sizes and GSList/GQueue nodes
 * allocated, linked and freed in waves; G_SLICE=always-malloc sends them all to malloc.
 * Usage: gslice SCALE SEED. Prints "checksum <hex>" (the same in both modes). */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

enum { SIZES = 6, LIVE = 4096 };
static const gsize SIZE[SIZES] = {16, 24, 40, 64, 96, 160};

typedef struct {
  gsize size;
  guint64* words;
} Record;

static guint64 state;
static guint64 next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gslice SCALE SEED\n");
    return 2;
  }
  long scale = atol(argv[1]);
  state = 0x9E3779B97F4A7C15ull ^ (guint64)atol(argv[2]);
  Record* live[LIVE] = {0};
  GSList* list = NULL;
  GQueue* queue = g_queue_new();
  guint64 sum = 0;
  for (long step = 0; step < scale * 200000; ++step) {
    guint64 r = next();
    int slot = (int)(r % LIVE);
    if (live[slot]) { /* free the old record: its payload, then itself */
      sum += live[slot]->words[0] + live[slot]->size;
      g_slice_free1(live[slot]->size, live[slot]->words);
      g_slice_free(Record, live[slot]);
    }
    Record* rec = g_slice_new(Record);
    rec->size = SIZE[(r >> 20) % SIZES];
    rec->words = g_slice_alloc(rec->size);
    rec->words[0] = r >> 8;
    live[slot] = rec;
    if ((r >> 40) % 4 == 0) list = g_slist_prepend(list, GSIZE_TO_POINTER(r & 0xffff));
    if ((r >> 42) % 3 == 0) g_queue_push_tail(queue, GSIZE_TO_POINTER(r & 0xff));
    if (step % 5000 == 4999) { /* a wave ends: the lists go */
      for (GSList* l = list; l; l = l->next) sum += GPOINTER_TO_SIZE(l->data);
      g_slist_free(list);
      list = NULL;
      while (!g_queue_is_empty(queue)) sum += GPOINTER_TO_SIZE(g_queue_pop_head(queue));
    }
  }
  for (int i = 0; i < LIVE; ++i)
    if (live[i]) {
      sum += live[i]->words[0];
      g_slice_free1(live[i]->size, live[i]->words);
      g_slice_free(Record, live[i]);
    }
  g_slist_free(list);
  g_queue_free(queue);
  printf("checksum %016llx\n", (unsigned long long)sum);
  return 0;
}
