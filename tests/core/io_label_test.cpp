// srun -l's labels (core/io_label): width of the highest task id, whole lines only.
#include <doctest/doctest.h>

#include "core/io_label.hpp"

using namespace hq;

TEST_CASE("io label: lines get the task id, padded to the highest id's width - partial lines wait") {
  LabelledOutput two(2);
  CHECK(two.feed(1, "a\nb") == "1: a\n");
  CHECK(two.feed(0, "x\n") == "0: x\n");
  CHECK(two.feed(1, "c\n") == "1: bc\n");
  CHECK(two.feed(1, "tail") == "");
  CHECK(two.finish(1) == "1: tail\n");
  CHECK(two.finish(1) == "");
  CHECK(two.finish(0) == "");
  LabelledOutput sixteen(16);
  CHECK(sixteen.feed(0, "x\n") == " 0: x\n");
  CHECK(sixteen.feed(15, "y\n\n") == "15: y\n15: \n");
  LabelledOutput ten(10);
  CHECK(ten.feed(9, "z\n") == "9: z\n");
  LabelledOutput eleven(11);
  CHECK(eleven.feed(3, "w\n") == " 3: w\n");
}

TEST_CASE("io label: without labels, whole lines pass unchanged - a partial line waits, a long one goes out, the last keeps no newline") {
  LabelledOutput out(2, false);
  CHECK(out.feed(0, "rank 0 says") == "");
  CHECK(out.feed(1, "rank 1 says hi\nand more") == "rank 1 says hi\n");  // task 0's half line is not split
  CHECK(out.feed(0, " hello\n") == "rank 0 says hello\n");
  CHECK(out.finish(1) == "and more");  // no newline added
  CHECK(out.finish(0) == "");
  std::string longline(5000, 'x');
  CHECK(out.feed(0, longline) == longline);  // not held forever
}
