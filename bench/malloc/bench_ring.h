/* A lock-free single-producer single-consumer ring of object pointers, for the
 * benchmarks that hand objects from one thread to another (larson, xfree,
 * prodcons). */
#pragma once
#include <stdatomic.h>
#include <stdint.h>

/* A program may set BENCH_RING_SLOTS (a power of two) before including this. */
#ifndef BENCH_RING_SLOTS
#define BENCH_RING_SLOTS 1024
#endif
enum { kRingSize = BENCH_RING_SLOTS };

/* Single-producer single-consumer ring of object pointers. */
typedef struct {
  _Alignas(64) _Atomic uint64_t head; /* next slot to read (consumer) */
  _Alignas(64) _Atomic uint64_t tail; /* next slot to write (producer) */
  _Alignas(64) void *items[kRingSize];
} ring;

static inline int ring_push(ring *q, void *item) {
  uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
  if (tail - head == kRingSize) return 0;
  q->items[tail % kRingSize] = item;
  atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
  return 1;
}

static inline void *ring_pop(ring *q) {
  uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
  if (head == tail) return NULL;
  void *item = q->items[head % kRingSize];
  atomic_store_explicit(&q->head, head + 1, memory_order_release);
  return item;
}

