// special layers (see include/strata/layers/special/).
#pragma once
#include "strata/layers/heap.hpp"
