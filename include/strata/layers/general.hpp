// general layers (see include/strata/layers/general/).
#pragma once
#include "strata/layers/heap.hpp"
