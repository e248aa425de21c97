// Size classes of small objects (Vam §3.1, "fine-grained size classes").
//
// Exact fit every 16 bytes up to kExactMax, then kClassesPerDoubling classes
// per power of two up to kSmallMax. The class of a size is one table lookup:
// kClassOf[(size + 15) / 16]. Everything here is computed at compile time.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "config.hpp"

namespace strata::malloc_detail {

namespace cfg = strata::malloc_config;

// The hardened build's tail word (cfg::kCanaryBytes) takes this much more
// room in a slot. Its classes above kExactMax are the default's plus this
// (but the last, kSmallMax), with one more exact class right after
// kExactMax: a request of a default class's size, often a power of two
// (1024, 4096), then fits with its tail in a slot barely bigger, not one
// 12.5% bigger (1040 bytes, not 1152), so free zeroes and the slot holds
// less waste. Requests of other sizes waste about as much as before.
inline constexpr std::size_t kCanaryRoom = (cfg::kCanaryBytes + cfg::kMinAlign - 1) / cfg::kMinAlign * cfg::kMinAlign;

// Where a page block holds more than 2 * kClassesPerDoubling objects of a
// power of two `base` (kExactMax up), the doubling above it starts with one
// more class: the largest that fits one object fewer than `base` in a block
// (at least base + kMinAlign). It takes a power of two plus a small header
// (SQLite's in-memory journal chunks: 1024 + 8 bytes, its 512 + 8 scratch),
// which the evenly spaced classes would put 12.5% further up.
constexpr bool has_snug_class(std::size_t base) { return cfg::kPageSize / base > 2 * cfg::kClassesPerDoubling; }
constexpr std::size_t snug_class_size(std::size_t base) {
  std::size_t size = cfg::kPageSize / (cfg::kPageSize / base - 1) / cfg::kMinAlign * cfg::kMinAlign;
  return size > base ? size : base + cfg::kMinAlign;
}

constexpr std::size_t count_classes() {
  std::size_t n = cfg::kExactMax / cfg::kMinAlign + (kCanaryRoom > 0 ? 1 : 0);
  for (std::size_t base = cfg::kExactMax; base < cfg::kSmallMax; base *= 2)
    n += cfg::kClassesPerDoubling + (has_snug_class(base) ? 1 : 0);
  return n;
}

inline constexpr std::size_t kClassCount = count_classes();

// The default build's k-th class (1..kClassesPerDoubling) above `base`, a
// power of two from kExactMax up: evenly spaced; but where a page block holds
// 2 * kClassesPerDoubling objects of `base` or fewer, class k is the largest
// that fits 2 * kClassesPerDoubling - k objects in a block, so no block loses
// its tail (evenly spaced, 5120 B left 4 KiB of every block unused, 6656 B
// 5.5 KiB) and a request just above base (a 4 KiB page plus a header, as
// SQLite's page cache makes) wastes 6%, not 12%.
constexpr std::size_t doubling_class_size(std::size_t base, std::size_t k) {
  if (cfg::kPageSize / base <= 2 * cfg::kClassesPerDoubling)
    return cfg::kPageSize / (2 * cfg::kClassesPerDoubling - k) / cfg::kMinAlign * cfg::kMinAlign;
  return base + k * (base / cfg::kClassesPerDoubling);
}

constexpr std::array<std::uint32_t, kClassCount> make_class_sizes() {
  std::array<std::uint32_t, kClassCount> sizes{};
  std::size_t i = 0;
  for (std::size_t s = cfg::kMinAlign; s <= cfg::kExactMax; s += cfg::kMinAlign) sizes[i++] = static_cast<std::uint32_t>(s);
  if (kCanaryRoom > 0) sizes[i++] = static_cast<std::uint32_t>(cfg::kExactMax + kCanaryRoom);
  for (std::size_t base = cfg::kExactMax; base < cfg::kSmallMax; base *= 2) {
    if (has_snug_class(base)) sizes[i++] = static_cast<std::uint32_t>(snug_class_size(base) + kCanaryRoom);
    for (std::size_t k = 1; k <= cfg::kClassesPerDoubling; ++k) {
      std::size_t size = doubling_class_size(base, k);
      sizes[i++] = static_cast<std::uint32_t>(size == cfg::kSmallMax ? size : size + kCanaryRoom);
    }
  }
  return sizes;
}

inline constexpr auto kClassSize = make_class_sizes();

inline constexpr std::size_t kClassIndexSlots = cfg::kSmallMax / cfg::kMinAlign + 1;

constexpr std::array<std::uint8_t, kClassIndexSlots> make_class_index() {
  std::array<std::uint8_t, kClassIndexSlots> index{};
  std::size_t cls = 0;
  for (std::size_t slot = 0; slot < kClassIndexSlots; ++slot) {
    std::size_t size = slot * cfg::kMinAlign;  // the largest size mapping to this slot
    while (kClassSize[cls] < size) ++cls;
    index[slot] = static_cast<std::uint8_t>(cls);
  }
  return index;
}

inline constexpr auto kClassIndex = make_class_index();

// The class of a small size (size <= kSmallMax; 0 maps to the smallest class).
inline constexpr std::size_t class_of(std::size_t size) noexcept {
  return kClassIndex[(size + cfg::kMinAlign - 1) / cfg::kMinAlign];
}

// The first slot of kClassIndex that maps to each class (its last is
// kClassSize[cls] / kMinAlign).
constexpr std::array<std::uint16_t, kClassCount> make_class_first_slot() {
  std::array<std::uint16_t, kClassCount> first{};
  for (std::size_t slot = kClassIndexSlots; slot-- > 0;) first[kClassIndex[slot]] = static_cast<std::uint16_t>(slot);
  return first;
}

inline constexpr auto kClassFirstSlot = make_class_first_slot();

static_assert(kClassCount <= 255, "class numbers fit a byte");
static_assert(kClassSize[kClassCount - 1] == cfg::kSmallMax);
constexpr bool classes_increase() {
  for (std::size_t c = 1; c < kClassCount; ++c)
    if (kClassSize[c] <= kClassSize[c - 1]) return false;
  return true;
}
static_assert(classes_increase());
static_assert(class_of(0) == 0 && class_of(16) == 0 && class_of(17) == 1);
static_assert(kClassSize[class_of(cfg::kExactMax + 1)] == cfg::kExactMax + cfg::kMinAlign);
// A request of a default class's size (below kSmallMax) fits a class of
// exactly kCanaryRoom more.
constexpr bool default_class_sizes_fit_with_tail() {
  auto fits = [](std::size_t size) { return kClassSize[class_of(size + cfg::kCanaryBytes)] == size + kCanaryRoom; };
  for (std::size_t s = cfg::kMinAlign; s <= cfg::kExactMax; s += cfg::kMinAlign)
    if (!fits(s)) return false;
  for (std::size_t base = cfg::kExactMax; base < cfg::kSmallMax; base *= 2) {
    if (has_snug_class(base) && !fits(snug_class_size(base))) return false;
    for (std::size_t k = 1; k <= cfg::kClassesPerDoubling; ++k)
      if (doubling_class_size(base, k) < cfg::kSmallMax && !fits(doubling_class_size(base, k))) return false;
  }
  return true;
}
static_assert(default_class_sizes_fit_with_tail());
constexpr bool every_size_fits() {
  for (std::size_t s = 0; s <= cfg::kSmallMax; ++s) {
    std::size_t c = class_of(s);
    if (kClassSize[c] < s) return false;
    if (c > 0 && kClassSize[c - 1] >= s) return false;  // and it is the smallest class that fits
    if (kClassSize[c] % cfg::kMinAlign != 0) return false;
  }
  return true;
}
static_assert(every_size_fits());

}  // namespace strata::malloc_detail
