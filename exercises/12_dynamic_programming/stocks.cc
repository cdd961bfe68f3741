#include "chapters/12_dynamic_programming/stocks.h"
#include "chapters/12_dynamic_programming/contracts.h"
#include "common/check.h"

namespace book::dynprog {

int max_profit_one(const std::vector<int>& prices) {
  contract::stock_prices("max_profit_one", prices);
  (void)prices;
  BOOK_NOT_IMPLEMENTED("dp.121", "exercises/12_dynamic_programming/stocks.cc",
                       "chapters/12_dynamic_programming/README.md, section Stocks");
}

int max_profit_many(const std::vector<int>& prices) {
  contract::stock_prices("max_profit_many", prices);
  (void)prices;
  BOOK_NOT_IMPLEMENTED("dp.122", "exercises/12_dynamic_programming/stocks.cc",
                       "chapters/12_dynamic_programming/README.md, section Stocks");
}

int max_profit_two(const std::vector<int>& prices) {
  contract::stock_prices("max_profit_two", prices);
  (void)prices;
  BOOK_NOT_IMPLEMENTED("dp.123", "exercises/12_dynamic_programming/stocks.cc",
                       "chapters/12_dynamic_programming/README.md, section Stocks");
}

int max_profit_k(int k, const std::vector<int>& prices) {
  contract::max_profit_k(k, prices);
  (void)k, (void)prices;
  BOOK_NOT_IMPLEMENTED("dp.188", "exercises/12_dynamic_programming/stocks.cc",
                       "chapters/12_dynamic_programming/README.md, section Stocks");
}

int max_profit_cooldown(const std::vector<int>& prices) {
  contract::stock_prices("max_profit_cooldown", prices);
  (void)prices;
  BOOK_NOT_IMPLEMENTED("dp.309", "exercises/12_dynamic_programming/stocks.cc",
                       "chapters/12_dynamic_programming/README.md, section Stocks");
}

int max_profit_fee(const std::vector<int>& prices, int fee) {
  contract::max_profit_fee(prices, fee);
  (void)prices, (void)fee;
  BOOK_NOT_IMPLEMENTED("dp.714", "exercises/12_dynamic_programming/stocks.cc",
                       "chapters/12_dynamic_programming/README.md, section Stocks");
}

}  // namespace book::dynprog
