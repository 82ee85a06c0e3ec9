// The file task runner and what every task shares; the downloads and
// uploads are in download_task.cpp and upload_task.cpp.
#include "ssh/sftp_client/file_tasks.hpp"

#include <algorithm>
#include <memory>

namespace longhaul::sftp {

void file_task::finish(int r)
{
    finished_ = true;
    result_ = r;
}

namespace {

class note_task final : public file_task {
public:
    note_task(remote_fs& fs, message m, int result) : file_task(fs), result_(result) { messages.push_back(std::move(m)); }
    void start() override { finish(result_); }

private:
    int result_;
};

} // namespace

std::unique_ptr<file_task> make_note(remote_fs& fs, file_task::message m, int result)
{
    return std::make_unique<note_task>(fs, std::move(m), result);
}

// --- runner ----------------------------------------------------------------------

void task_runner::flush_head()
{
    while (!running_.empty()) {
        file_task* head = running_.front().get();
        if (meter_ != nullptr && head->data_started && head->meter_wanted && metered_ != head) {
            meter_->start(head->meter_file, head->meter_size, &head->progress);
            metered_ = head;
        }
        if (!head->finished())
            return;
        if (metered_ == head) {
            meter_->stop();
            metered_ = nullptr;
        }
        head->before_report();
        for (const auto& m : head->messages) {
            if (m.what == file_task::message::error)
                fs_.out().err(m.text);
            else if (m.what == file_task::message::info)
                fs_.out().inf(m.text);
            else if (m.what == file_task::message::print)
                fs_.out().say(m.text);
            else if (m.what == file_task::message::debug)
                fs_.out().dbg(1, m.text);
        }
        if (head->result() != 0) {
            status_ = -1;
            ++failures_;
            if (!head->on_failure.empty())
                fs_.out().err(head->on_failure);
        }
        head->reported();
        running_.pop_front();
    }
}

int task_runner::run()
{
    session& s = fs_.sess();
    const std::size_t limit = std::max<std::size_t>(1, s.max_parallel_files());
    if (meter_ != nullptr)
        s.set_tick([this] {
            if (metered_ != nullptr)
                meter_->refresh();
        });
    if (last_batch_) {
        // The caller's request is the last when nothing is queued and no
        // other task is still waiting for the server.
        s.set_last_request_check([this] {
            if (!queue_.empty())
                return false;
            std::size_t unfinished = 0;
            for (const auto& t : running_)
                unfinished += t->finished() ? 0 : 1;
            return unfinished == 1;
        });
    }
    auto finished_count = [&] {
        std::size_t n = 0;
        for (auto& t : running_) {
            if (!t->finished())
                t->poll();
            if (t->finished())
                ++n;
        }
        return n;
    };
    for (;;) {
        while (running_.size() < limit && !queue_.empty() && s.ok() && !s.interrupted()) {
            running_.push_back(std::move(queue_.front()));
            queue_.pop_front();
            running_.back()->start();
        }
        if (!s.ok() || s.interrupted()) {
            if (!queue_.empty())
                status_ = -1;
            queue_.clear();
        }
        flush_head();
        if (running_.empty()) {
            if (queue_.empty())
                break;
            continue;
        }
        // Until one more file finishes (which may free a slot or let the
        // head be reported). A failed session answers everything at once.
        const std::size_t before = finished_count();
        s.run_until([&] { return finished_count() > before || !s.ok(); });
        if (!s.ok() && finished_count() < running_.size()) {
            // Nothing more can arrive; what is still unfinished failed.
            for (auto& t : running_)
                if (!t->finished())
                    status_ = -1;
            running_.clear();
            metered_ = nullptr;
        }
    }
    if (meter_ != nullptr)
        s.set_tick(nullptr);
    s.set_last_request_check(nullptr);
    return status_;
}

} // namespace longhaul::sftp
