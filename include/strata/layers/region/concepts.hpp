// What each region layer needs from the layer below it, as C++20 concepts
// (the general contract is in strata/layers/heap.hpp). A region layer names
// its Super's concept in its template head, so a wrong composition, say
// TaggedStreamHeap<ChunkSource> without the RegionChunkHeap between them,
// fails to compile with "constraints not satisfied" and the requirement that
// is missing, instead of an error deep inside the layer.
//
// The chain the reap is built from, bottom to top:
//   ChunkSource                      a ChunkMapper
//   RegionChunkHeap<ChunkMapper>     a RunSource
//   TaggedStreamHeap<RunSource>      a TaggedStream
//   ClearOptimizedHeap<TaggedStream> a TaggedStream again
//   NestedHeap<any class>
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "strata/layers/heap.hpp"

namespace strata::layers {

struct ChunkRun;  // region_chunk_heap.hpp

// Where memory comes from, whole pages at a time: map(bytes) gives fresh
// memory or nullptr, unmap(p, bytes) gives back exactly what map gave.
template <class S>
concept ChunkMapper = requires(S source, void* p, std::size_t bytes) {
  { source.map(bytes) } -> std::same_as<void*>;
  source.unmap(p, bytes);
};

// Runs of memory to bump through (RegionChunkHeap): nextRun(bytes) gives the
// next run of at least bytes; clear() replays the runs from the first;
// clearInPlace() does the same when the round used one run only, which then
// stays the current run (true), or does nothing (false); releaseAll() gives
// every chunk back. Objects too big for a run are mapped alone, so it is a
// ChunkMapper too.
template <class S>
concept RunSource = ChunkMapper<S> && requires(S source, std::size_t bytes) {
  { source.nextRun(bytes) } -> std::same_as<ChunkRun>;
  source.clear();
  { source.clearInPlace() } -> std::same_as<bool>;
  source.releaseAll();
};

// A bump stream of tagged objects (TaggedStreamHeap): a heap whose malloc
// takes the instrumentation as a template argument, whose inline window can be
// closed and opened again (for a reason, a flag), and which keeps the
// statistics that a layer reusing its objects corrects (catchUp,
// noteShrunk, streamObjects, streamBytes), and which can bump for a while
// through a stretch lent to it (lendRun, lent, fitsRun, endLoan).
template <class S>
concept TaggedStream = ClearableHeap<S> && requires(S stream, const S& view, std::size_t size,
                                                     std::uint32_t reason) {
  { stream.template malloc<false>(size) } -> std::same_as<void*>;
  { stream.template malloc<true>(size) } -> std::same_as<void*>;
  stream.closeInline(reason);
  stream.openInline(reason);
  view.catchUp();
  { view.untouched() } -> std::same_as<bool>;
  { stream.unbumpLast(static_cast<void*>(nullptr), size) } -> std::same_as<bool>;
  stream.noteShrunk(size, size);
  stream.lendRun(static_cast<void*>(nullptr), size);
  { view.lent() } -> std::same_as<bool>;
  { view.fitsRun(size) } -> std::same_as<bool>;
  { stream.endLoan(static_cast<std::size_t*>(nullptr)) } -> std::same_as<void*>;
  { view.streamObjects() } -> std::convertible_to<std::size_t>;
  { view.streamBytes() } -> std::convertible_to<std::size_t>;
};

// NestedHeap only adds links to its Super: any class it can derive from.
template <class S>
concept Nestable = std::is_class_v<S> && !std::is_final_v<S>;

}  // namespace strata::layers
