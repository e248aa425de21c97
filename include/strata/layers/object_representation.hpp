// object_representation layers (see include/strata/layers/object_representation/).
#pragma once
#include "strata/layers/heap.hpp"
