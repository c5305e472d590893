// `slipway engine bundle --out F.tar.gz`: writes the engine bundle this app carries (engine/bundle/) and says
// what it is: its SHA-256 (the tarball is reproducible), which names the engine a cluster builds from it.
#include <QCryptographicHash>
#include <QFile>

#include <filesystem>
#include <system_error>

#include "cli/remote_connect.h"
#include "core/install_paths.h"

namespace slipway::app {

int run_engine_bundle(RemoteCommands& c, std::ostream& out, std::ostream& err) {
    const std::string bundle = find_engine_bundle();
    if (bundle.empty()) {
        return fail(
            err,
            "this slipway carries no engine bundle (a build made without network at its first "
            "configure has none: reconfigure with the Debian mirror reachable); $SLIPWAY_ENGINE_BUNDLE "
            "names one");
    }
    std::error_code ec;
    std::filesystem::copy_file(bundle, c.bundle_out, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return fail(err, c.bundle_out + ": cannot write the bundle: " + ec.message());
    QFile file(QString::fromStdString(c.bundle_out));
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!file.open(QIODevice::ReadOnly) || !hash.addData(&file))
        return fail(err, c.bundle_out + ": cannot read it back");
    out << "bundle=" << c.bundle_out << " sha256=" << hash.result().toHex().toStdString()
        << " bytes=" << file.size() << "\n";
    return 0;
}

}  // namespace slipway::app
