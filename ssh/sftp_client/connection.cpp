#include "ssh/sftp_client/connection.hpp"

namespace longhaul::sftp {

std::unique_ptr<connection> connection::open(const std::vector<std::string>& argv, const session_options& o,
                                             const output_sink& out, std::string& error, bool ignore_sigint,
                                             const std::function<void(remote_fs&)>& first_lookup)
{
    auto child = child_process::spawn(argv, error, ignore_sigint);
    if (!child)
        return nullptr;
    std::unique_ptr<connection> c(new connection);
    c->child_ = std::move(*child);
    connection* raw = c.get();
    c->link_ = std::make_unique<fd_link>(c->child_.from_child(), c->child_.to_child(),
                                         [raw] { raw->child_.close_to_child(); });
    c->session_ = std::make_unique<session>(*c->link_, o);
    c->fs_ = std::make_unique<remote_fs>(*c->session_, out);
    remote_fs& fs = *c->fs_;
    const auto alongside = [&fs, &first_lookup] {
        if (first_lookup)
            first_lookup(fs);
    };
    if (!c->session_->init(alongside)) {
        error = c->session_->core().failure();
        if (error.empty())
            error = "Connection closed";
        c->close();
        return nullptr;
    }
    return c;
}

int connection::close()
{
    if (closed_)
        return 0;
    closed_ = true;
    child_.close_pipes();
    return child_.wait();
}

connection::~connection()
{
    close();
}

} // namespace longhaul::sftp
