// utility layers (see include/strata/layers/utility/).
#pragma once
#include "strata/layers/heap.hpp"
