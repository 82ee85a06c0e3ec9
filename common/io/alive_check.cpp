#include "common/io/alive_check.hpp"

namespace longhaul {

alive_check::step alive_check::on_timer(clock::time_point last_input, clock::time_point now)
{
    // Anything from the peer answers every probe sent before it.
    if (last_input != last_seen_) {
        last_seen_ = last_input;
        unanswered_ = 0;
    }
    if (unanswered_ == 0 && now < last_input + interval_)
        return {action::wait, last_input + interval_};
    if (unanswered_ >= count_max_)
        return {action::give_up, now};
    ++unanswered_;
    return {action::probe, now + interval_};
}

} // namespace longhaul
