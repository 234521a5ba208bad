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
