// srun -l: every line a task writes gets its task id as a prefix, "%*d: " with the width
// of the highest id ("0: " for up to 10 tasks, " 0: " ... "15: " for 16), and a last line
// without a newline gets one (Slurm's write_labelled_message.c). Lines of different tasks
// never mix: a partial line waits for its end. Without labels (srun's default line
// buffering, Slurm's buffered_stdio) lines pass unchanged, a partial line waits for its end
// or until it is 4 KiB long, and a last line keeps its lack of a newline.
// Pure; one per output stream.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace hq {

class LabelledOutput {
 public:
  explicit LabelledOutput(int32_t ntasks, bool labels = true);
  // Complete lines from task `task`'s bytes, labelled; the rest waits.
  std::string feed(uint32_t task, std::string_view data);
  // The task's stream ended: its waiting partial line, labelled, with a newline.
  std::string finish(uint32_t task);

 private:
  std::string label(uint32_t task) const;
  int width_ = 1;
  bool labels_ = true;
  std::map<uint32_t, std::string> partial_;
};

}  // namespace hq
