// What every size-class table must satisfy, whatever its spacing (Kingsley's
// powers of two, Lea's exact-then-geometric bins): size_class maps a request to
// its class, class_size gives the size the class hands out.
#pragma once
#include <gtest/gtest.h>

#include <cstddef>

namespace strata::test {

// For classes [0, classes): sizes strictly increase, each class's own size maps
// back to it and one byte more to the next class; and every request from 1 to
// sample_up_to (sampled) fits the size of its class.
// Call as ASSERT_NO_FATAL_FAILURE(expect_size_classes_consistent(...)).
template <class SizeClass, class ClassSize>
void expect_size_classes_consistent(SizeClass size_class, ClassSize class_size, std::size_t classes,
                                    std::size_t sample_up_to = 100000) {
  for (std::size_t c = 0; c < classes; ++c) {
    if (c > 0) {
      ASSERT_LT(class_size(c - 1), class_size(c)) << "increasing at " << c;
    }
    ASSERT_EQ(size_class(class_size(c)), c) << "the size of class " << c;
    ASSERT_EQ(size_class(class_size(c) + 1), c + 1) << "one byte more than class " << c;
  }
  for (std::size_t s = 1; s < sample_up_to; s += 7) ASSERT_GE(class_size(size_class(s)), s) << "request " << s;
}

}  // namespace strata::test
