/// @file
/// Chapter 12's exercises: LeetCode dynamic-programming problems, with LeetCode's signatures in
/// standard C++ types. Each function is an exercise whose ID is `dp.<LeetCode number>`; the
/// declarations live in one header per technique, all included here.
#pragma once

#include "chapters/12_dynamic_programming/basics.h"
#include "chapters/12_dynamic_programming/bitmask.h"
#include "chapters/12_dynamic_programming/classics.h"
#include "chapters/12_dynamic_programming/edit_distance.h"
#include "chapters/12_dynamic_programming/knapsack.h"
#include "chapters/12_dynamic_programming/palindromes.h"
#include "chapters/12_dynamic_programming/robbers.h"
#include "chapters/12_dynamic_programming/stocks.h"
#include "chapters/12_dynamic_programming/subsequences.h"
