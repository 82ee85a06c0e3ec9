// Whole-file reads for tests. One read of the file's size: the tests read
// files of up to 80 MiB, and an istreambuf_iterator copy, byte by byte, was
// half of sftp_client_tests' time under ASan.
#pragma once

#include <fstream>
#include <string>

namespace longhaul::test {

// The file's bytes, or "" when it cannot be opened.
inline std::string read_whole_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        return {};
    const std::streamoff size = in.tellg();
    std::string data(size > 0 ? std::size_t(size) : 0, '\0');
    in.seekg(0);
    in.read(data.data(), std::streamsize(data.size()));
    data.resize(std::size_t(in.gcount()));
    return data;
}

} // namespace longhaul::test
