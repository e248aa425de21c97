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

constexpr std::size_t count_classes() {
  std::size_t n = cfg::kExactMax / cfg::kMinAlign;
  for (std::size_t base = cfg::kExactMax; base < cfg::kSmallMax; base *= 2) n += cfg::kClassesPerDoubling;
  return n;
}

inline constexpr std::size_t kClassCount = count_classes();

constexpr std::array<std::uint32_t, kClassCount> make_class_sizes() {
  std::array<std::uint32_t, kClassCount> sizes{};
  std::size_t i = 0;
  for (std::size_t s = cfg::kMinAlign; s <= cfg::kExactMax; s += cfg::kMinAlign) sizes[i++] = static_cast<std::uint32_t>(s);
  for (std::size_t base = cfg::kExactMax; base < cfg::kSmallMax; base *= 2)
    for (std::size_t k = 1; k <= cfg::kClassesPerDoubling; ++k)
      sizes[i++] = static_cast<std::uint32_t>(base + k * (base / cfg::kClassesPerDoubling));
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
static_assert(class_of(0) == 0 && class_of(16) == 0 && class_of(17) == 1);
static_assert(kClassSize[class_of(cfg::kExactMax + 1)] == cfg::kExactMax + cfg::kExactMax / cfg::kClassesPerDoubling);
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
