// combining layers (see include/strata/layers/combining/).
#pragma once
#include "strata/layers/heap.hpp"
