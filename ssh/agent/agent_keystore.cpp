#include "ssh/agent/agent_keystore.hpp"

#include <algorithm>

namespace longhaul::agent {

namespace {

bool same_blob(const stored_identity& id, byte_span blob) noexcept
{
    const bytes& b = id.blob();
    return b.size() == blob.size() && std::equal(b.begin(), b.end(), blob.begin());
}

} // namespace

bool keystore::add(stored_identity id)
{
    if (auto* old = find(id.blob())) {
        *old = std::move(id);
        return true;
    }
    if (ids_.size() >= max_keys)
        return false;
    ids_.push_back(std::move(id));
    return true;
}

stored_identity* keystore::find(byte_span blob) noexcept
{
    auto it = std::find_if(ids_.begin(), ids_.end(), [&](const stored_identity& id) { return same_blob(id, blob); });
    return it == ids_.end() ? nullptr : &*it;
}

bool keystore::remove(byte_span blob)
{
    auto it = std::find_if(ids_.begin(), ids_.end(), [&](const stored_identity& id) { return same_blob(id, blob); });
    if (it == ids_.end())
        return false;
    ids_.erase(it);
    return true;
}

std::size_t keystore::expire(agent_clock::time_point now)
{
    return std::erase_if(ids_, [&](const stored_identity& id) { return id.deadline && *id.deadline <= now; });
}

std::optional<agent_clock::time_point> keystore::next_deadline() const noexcept
{
    std::optional<agent_clock::time_point> next;
    for (const auto& id : ids_)
        if (id.deadline && (!next || *id.deadline < *next))
            next = id.deadline;
    return next;
}

std::size_t keystore::remove_provider(const std::string& provider)
{
    const auto before = ids_.size();
    ids_.erase(std::remove_if(ids_.begin(), ids_.end(),
                              [&](const stored_identity& id) { return id.token() && id.token()->provider == provider; }),
               ids_.end());
    return before - ids_.size();
}

} // namespace longhaul::agent
