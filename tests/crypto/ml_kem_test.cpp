#include "common/crypto/ml_kem.hpp"

#include <doctest/doctest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

using namespace longhaul;

namespace {

struct md_ctx_free {
    void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
using md_ctx = std::unique_ptr<EVP_MD_CTX, md_ctx_free>;

// A running SHAKE instance: absorb, then read one output.
class shake {
public:
    explicit shake(const EVP_MD* md) : ctx_(EVP_MD_CTX_new())
    {
        REQUIRE(ctx_);
        REQUIRE(EVP_DigestInit_ex(ctx_.get(), md, nullptr) == 1);
    }
    void write(byte_span b) { REQUIRE(EVP_DigestUpdate(ctx_.get(), b.data(), b.size()) == 1); }
    bytes read(std::size_t n)
    {
        bytes out(n);
        REQUIRE(EVP_DigestFinalXOF(ctx_.get(), out.data(), out.size()) == 1);
        return out;
    }

private:
    md_ctx ctx_;
};

// J(z || c): the implicit rejection key, computed here independently.
bytes rejection_key(byte_span dk, byte_span c)
{
    shake j(EVP_shake256());
    j.write(dk.last(32));
    j.write(c);
    return j.read(32);
}

bytes seed(std::uint8_t fill) { return bytes(32, fill); }

std::string hex(const secret_bytes& s) { return to_hex(s.span()); }

ml_kem768::encapsulation must(result<ml_kem768::encapsulation> r)
{
    REQUIRE(r.has_value());
    return std::move(*r);
}

secret_bytes must(result<secret_bytes> r)
{
    REQUIRE(r.has_value());
    return std::move(*r);
}

// 12-bit field `index` of the t-hat part of an encapsulation key set to v.
void set_field12(bytes& ek, std::size_t index, std::uint16_t v)
{
    const std::size_t at = index / 2 * 3;
    if (index % 2 == 0) {
        ek[at] = static_cast<std::uint8_t>(v);
        ek[at + 1] = static_cast<std::uint8_t>((ek[at + 1] & 0xf0) | (v >> 8));
    } else {
        ek[at + 1] = static_cast<std::uint8_t>((ek[at + 1] & 0x0f) | ((v & 0x0f) << 4));
        ek[at + 2] = static_cast<std::uint8_t>(v >> 4);
    }
}

} // namespace

// C2SP CCTV's accumulated vectors (c2sp.org/CCTV/ML-KEM): 10 000 tests drawn
// from a SHAKE-128 stream by the pq-crystals reference (FIPS 203 final),
// every output hashed into one running SHAKE-128.
TEST_CASE("ml_kem768: CCTV accumulated pq-crystals vectors (10 000 tests)")
{
    constexpr std::size_t tests = 10000;
    constexpr std::size_t per_test = 32 + 32 + 32 + ml_kem768::ciphertext_bytes;
    const auto start = std::chrono::steady_clock::now();

    // OpenSSL 3.0 cannot squeeze a SHAKE incrementally: the RNG's whole
    // stream is read at once (11.84 MB).
    const bytes stream = shake(EVP_shake128()).read(tests * per_test);
    CHECK(to_hex(byte_span(stream).first(16)) == "7f9c2ba4e88f827d616045507605853e");

    shake acc(EVP_shake128());
    std::size_t mismatches = 0;
    std::size_t failures = 0;
    for (std::size_t t = 0; t < tests; ++t) {
        const byte_span in = byte_span(stream).subspan(t * per_test, per_test);
        const byte_span d = in.first(32);
        const byte_span z = in.subspan(32, 32);
        const byte_span m = in.subspan(64, 32);
        const byte_span bad_ct = in.subspan(96);

        const auto kp = ml_kem768::key_gen_internal(d, z);
        acc.write(kp.encapsulation_key);
        acc.write(kp.decapsulation_key);
        const auto enc = ml_kem768::encaps_internal(kp.encapsulation_key, m);
        const auto k_bad = ml_kem768::decaps(kp.decapsulation_key, bad_ct);
        if (!enc || !k_bad) {
            ++failures;
            continue;
        }
        acc.write(enc->ciphertext);
        acc.write(enc->shared_secret);
        const auto k = ml_kem768::decaps(kp.decapsulation_key, enc->ciphertext);
        if (!k || !equal_constant_time(*k, enc->shared_secret))
            ++mismatches;
        acc.write(*k_bad);
    }
    CHECK(failures == 0);
    CHECK(mismatches == 0);
    CHECK(to_hex(acc.read(32)) == "f959d18d3d1180121433bf0e05f11e7908cf9d03edc150b2b07cb90bef5bc1c1");

    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("10 000 accumulated tests: " << ms << " ms");
}

// CCTV's "unlucky" vector: its seed makes SampleNTT read more than 575 XOF
// bytes for one matrix entry (probability about 2^-38 at random), past the
// first read, so the XOF is re-run for a longer output.
TEST_CASE("ml_kem768: CCTV unlucky SampleNTT vector")
{
    const bytes d = from_hex("82c4a361586b9715c2375a45fb85c32d04be7fe6e26acd820ec5d4080093afe1");
    const bytes z = from_hex("8476013560151d986dc7834dcb57c75f845f8d7ee71558d0955f3f4feb723cf2");
    const bytes m = from_hex("e48f74ad416e99631003ded1478aec62a02c245d88ed7f2fae92aedf13ca03b3");
    const std::string ek =
        "ad568015b87690ebbe1fb438ee8a22b9ac4379a12422e34037c231341c316bc0be74d49aaeb09d9039ad875a6b81f48b20b73c517533f8"
        "5ba5ce46029319382e00012020297f475d906bc3b6ea08f3e10069d3095c87c1a6456c18b92ef25bcb5e59363bb1acaa0627c1ec381125"
        "1b9f7487d7b70fadea527e67ace1049ee74303c6220ed8807b1936b4d02b2b5c7b3795e13c40654a47d72784d3c09b4b7b3969a633001f"
        "37c7cabc51773b1586843045059337587983c5f88c5e62619f47ae784c292779a30c8a93eb40a9921c10b461128af7c29a92a348db86a3"
        "03b6031376cc6768a8e06caab48e33a073ae06cbd225972fb47c28d46a57471b133a3ad18a95a35b838a469bf4e820e78570c72946b9f3"
        "b44bc7778e4a05dd106b8e14b093a49239d22a9eecb664454126b75ae24c600b3c4d167699d841842fb956119209af596e20cca0e2a539"
        "80232ee2f3916e570fffa805f6241488106d57d39c9219afaeb5b7379c5347270c7dccc280e34dae801153285dc8421a95c7a2f4cc8389"
        "ac9316da0816dacc3bf71c5619802e0a691e4a323836428e6587330a52c2f76578035986e7c15d500a2ec36dc7f430fc03813453b1a666"
        "946571641e32b4cafbbae6ea1d7f47c43549c802d97cd839689517b80b619da8137296a5be4a9c3b32e6375984b1ca00557f960583582c"
        "5503a48f5309ca802b6967a9488314bb51909536187c2082ab200c8344c4fa2c262915ac582796d3007db7566f64031a4cc48c975b593b"
        "424b04855a6af98065474560e7cb48ac043f25b65116981f17cfc11b0ccd62200d7a2d70f54994087d0056400e1525fa498386241dc10c"
        "95c372361330919f773765f730405c23a5c7a088b8a422251b0153c750e6c2b33aa1cc1c7288d536c405a6ae7b40626aac52488ad5522e"
        "3f5696ae26b7cb592d1c4690fc8602a4c833b1f57ba5bb255f3359924b98da49b757127686750f301b87058a3b66b9cd98d8c611cc472e"
        "243f8d2aa631ca98e8c162a9b87e406471698349d236119f78b98c61a83648880d7875f450975f49ca3dc29082d2a07b91ab834b6ddcc0"
        "c5495b6b5de24c735852b917bf749b0f1f3034f346475355018989c4cef23745a352f6680104ab59c2643405a24f89a8232fe33ed667be"
        "9c282adef009b585bda08c64dc169c41344c6d570020b02cdbc26437c046719bbc02b39c8f9b01d020c242080bf221000594bab19668d9"
        "f7cfbfb50583b45e71c230a93a16a20a9c81a269544bafd00bba65e48ba99582587a360da68f68b2ba7f2432d8976c9a0990a4d3471406"
        "4e1bd960e8f12c27dc1bd410a856f16b5eca293891152e724b58fc7940852cdd9c39231671bd278f38e18c886a4b0c714a432c9c354a30"
        "4aec6c65fc85ebaaa143f181e2b10e40300ff7913346eb315c499b68343b5e70395755745f4775524cc223bc635582680f5cbea9269650"
        "393231a31b8a6b2364985c4d9b9275d417c7c327e6525a0370766a508f087c437ac105cbba4646a0bc3ab7a3a68307f100a7545b6c08d3"
        "8501e404833c19f4eb6ec73792a8c5253b67a398e79aa1cb3c2433a4bacba5f4fc135751987d071be157bbd976a9cb029cc0e2b99a795d"
        "aadc9cce56db4bfd02cf1893c6441a1b78f1bdd9b13626b9f21b7c6161";
    // dk = dk_PKE || ek || H(ek) || z: only dk_PKE and H(ek) are new.
    const std::string dk_pke =
        "c50385c7c4b17639049f390088bac9d5549acc166b2db7ba00344527fc2d31c29f0ea39fe8070de84223ea24aa06eca94b8674c4287141"
        "507bd09c5825399d16644e42bb76a8e993ec9ab8c05ab5c7986a92e26129b56446697f7c209b27da15283819c8a4a217507188009d575a"
        "79a6ac0aecf73bc0775c0994aeb62267d495c418906800ac0b7db501f8f06c6127c2e11cc963bbc7819595d36407cb416432c921de82c5"
        "4c1b7f8675b3366208cd4278b7498db28674d786c78484cee2d02d381247adc687755b319ea319db965d76162a59f228e9708423fbba00"
        "761902d0309a3b3ad209b0b8249eb96537d562683b3339056558c41bc2e9a77d6436120503bdc813596b97c67e174bfa6563b54b58b7eb"
        "b2183abdff888937f6b85b6a514ba8339b873373d1b7a7c08bc4b6c6677610c673cc8ae3c1ad9b00021bc743525e95997b9ae87341eb74"
        "aa5b6941a2b036dc4926fb57f124163b3cab7fa6cee2ec2e2c45bcf2dba57f119986d1038a8527ddfc32ba31290afc7d54481b5701c35c"
        "954fc3387c669c726b6a6b76c57bdaeb57ad3c77221996b5508206e180ae165a1e3cca801746718a826a481189c301fc07283b558649a9"
        "03081b73c8408ef981b47b8c348e80cf5e4c166b80349f04ce30c74192a5aea7b395306aa844c194b1b21759cb93d7ea363adb15e8cb1c"
        "a6b7089a528f7a16346da83371a641e1691990578fd54a350c71a0cf273797649258f45589662e040314e7f731b55852cf381da8fb429d"
        "76adc240882681b150507faa46c0977522b7d545897bba709aca99499a3ab1107c6b4430ec92d0a9aa79d4bcf97b2a705659f390299d18"
        "39f7f2292ea81affb45ffea41b1802d098e4a1893bca4a2a589335c531aac99e88cd759309a6a1c7a3397ce5987679e1b8cc00ad1a44b0"
        "b11356dbc540baa4b3002dcc30699ad8f4c20ac4874da318f089b12a7a43699b9d02918cf4fb0977196e987c55c2125e5a4a7d2ae3a935"
        "256f2aaa7e3f2a6b11f1adc879c15179651cdcb9e7d620b72811f418956b878716448320f27cfb4992b5872789a17be3558bb20871832c"
        "27785352d3f53ddb2c8dd99b16035b7f2e0c1feef183f1698dee8106c6b54eb984cb09a88ffa3899e4daac64930618b0c108fb939c1881"
        "29c542589b6fcf764d7a61690ebb8794bc7d8df59f83f189097bcf9f638782f35fee956f66940c71ba79c30c7af5e18146175a3fd1a492"
        "d14f299839f642cddb945b9a053821728d22b033d334c38cd349f3b69c03f39dc20751fae027d074751f347c776484b8f1c0e0d678ebc9"
        "a63ebbc534d9afd9c70080695bd3c9965aa46fd6014180f27c97084829350f0a5ab9518636d4e83294571255b81c63944893481f22bb44"
        "d4137568085f3c419710667ad0d3cbbd59cbe6c8190a479742d728640494b4181c0ea1b219a12220cb0d617c39f3b876043526c3c32d13"
        "ca94d2ec248d259c0f047a069905f9d54aa6318a1f594207d6b000a45783812c53b98a8a342d4fd70460e9af44ea740516afc7670d9c9c"
        "46af64cfe0616aafea516098cd54e48fea087a6b7373fb52a4dad46d28253837a0c309520362416907636f32015a9642aaf23858";
    const std::string ek_hash = "451f9b6547b8f6e927fbfe7598658160206040fdb57dd39ba8bf1f3a5ff89b9c";
    const std::string c =
        "696ef1699d5ac2aa9a012a64c60c6c214dcedec75ff87fb3a5850044202a790bfdaa6fb517a8c714a6685b1eea8ac01d28e2f1e7350e79"
        "b1371b2aab98723f40ac1adb809751118a53eb56f13cf9fadf698c7a2ae127746bb661f6772d8227777c22d388e2a0f635f97913191033"
        "d3c487a9d2822348be19710e5f47d2b740c044f39ddae838699f62a1056dbc43364046d36a972f7110c88e900ca37daec64039b0c96319"
        "cef8ea01d5974c5da29392222b838e7c3d19892aa70f3a232b64f94ae72ff2032941a70dd71e2e24c987fe4c2f5027fd435618288f50e8"
        "d248fbe009d93af8b0dea451414f2cbaceda51b3a7aabff1faed24293e0d5d57da89868630e1b09a6b27a034bd5da40d622e0b9507e64d"
        "81669a1074b5f67728a9fadb600bc57d55d9c3a0fe376fdefd32a30b1931315210bd8622ff0b2ad9bf6d00749942e07a90572d0468d5f5"
        "a95aa6c338b2e5e5175dd8f4bd118e8849be829e3fb08628101a33b1295b1c7ee3e9158d4beaea203a22c1b97af6ad7fc004f0f9895a51"
        "da0c26a7b46734c418afe98ddbaada3fffcd4642075bd23e044154cfe19a0b6a05e24e83c55057a50d24f956617534dfcf99f134bbc539"
        "b1e7c9c3d00f59de4351e9ecfbec3f66374ecea6ab72d0fd00e0f91461db0a74fc5ab63b30a2caf455fea339878ba665aeeee0b52d427a"
        "4e4ccad8526386951f5b1d61778a56dfa243d3f6186aa4f8fd953127599bc14da3e8e918aaa5b4182a9bde4b5bb1871a972ef526b9f441"
        "7373001842f2b3eae1fe0d4693220b843bf265c59a647930946bdd72aa54a1af18daa3864327d91b80611c30bc1e16a89f71ddc51cf6fc"
        "e4a179239d0f21a0bce88c86499ef9ca1219039be087664c365149b3683b94fcb06dc858dea2f5bb7edb32fdc09cd91c74bfe29608b48d"
        "0db29061099671f6cf8dfbba2b1db456eca1c8657de5e982f11da9c3173a633ba7ec0066a717bc6eadde242f3e03cddab1c42def35f9cc"
        "2d6fa2f4222bfa096d321dd504d6c8dd6e6d18937151330be89bf2a218752442f8a50df3075463476db1e0a5275fd7958f7b650a11a36d"
        "b809cee7074bc763d035245c3c6da7fcc93425175e0cb3f7407000fb6c0b7a7450ada28c05c34f883af2cd0965826cec71435d87e8cd19"
        "2137e3abae4050d68be1d97fa3af08728daa4ba05aa7f61b8a7f52701d6c969b25fd2fd1a68a5b2098a348273337782ec52143e1f51e5a"
        "512e91f2469da136e8d8f96af7cc6fe21f929203bcd12de6826bba19cfe5a69bc2c3d3f503a14cab590591cd134b375feaae76c764c95d"
        "ae6644551c6d5bce2665f9c1dd4c33694100d88fcc4e3282eb8c1766917956199273f0f80c67dc3e944a449ab2ed9d58554c62ee43bdc2"
        "d1408d784f08c0c71d6171176ca6c912626c45eb1fa1292774885a73bd614ae833797a1c84afee1a7e7c105eca8273b304cbc44acab030"
        "5aba4ef6ba671739d1f80d09c7640acea982655b3294ee0371019b134559be391c29d990f82f8a1dd4a715";
    const std::string k = "4f7cc64c040fc4e335a539691f4638caf8b1bf5da6455754afe699e41813801b";

    const auto kp = ml_kem768::key_gen_internal(d, z);
    CHECK(to_hex(kp.encapsulation_key) == ek);
    CHECK(hex(kp.decapsulation_key) == dk_pke + ek + ek_hash + to_hex(z));
    const auto enc = must(ml_kem768::encaps_internal(kp.encapsulation_key, m));
    CHECK(to_hex(enc.ciphertext) == c);
    CHECK(hex(enc.shared_secret) == k);
    CHECK(hex(must(ml_kem768::decaps(kp.decapsulation_key, from_hex(c)))) == k);
}

// CCTV's strcmp vector: the ciphertext starts with a zero byte, so a
// comparison that stopped at the first zero would take it for the
// re-encryption and return K' instead of rejecting it.
TEST_CASE("ml_kem768: CCTV strcmp vector is rejected")
{
    const bytes dk = from_hex(
        "8c65b853a6bdcaa8966106bd29f7aee2e386efb5a0b0c6605562577bcab1ef330fd04625e86a1957408586da127291ab9e245fb52b044d"
        "2a201b5c0db9d806cc39ac9819aa66f59db5c816c2ac0d0e2a846130ab01786bb0e459c667769311242f49a2db96223128a33f05b4f282"
        "91df7c414b659b2354385d3036324c100c49af75e3c393a1b840d8084fc2afdcd134352954af8c9f95707cacb6b58c881d145682b47722"
        "13061a35b15cfe7a620a71bcd48a11e5f5b430ab3a8350407a654642209fe005319187081c434826c54dd1947e4ae1a65d5a918b17b167"
        "271920283f4738ba3ba7425727c88f87b5b9193d61baca86947b8c2b65ab619edff5364c58ab9363ccbf17ccfa440690e30db4acb04cb7"
        "a676babda48122283c56fc267b44c0c3d4ac9e04b79442f216721a7718612781801b0e909cd2a3b29dbbb770b58f07c3be33f1b4e58857"
        "c8d858f7227add741c85da3f205241f2e74054d540eb980dfc6b6051024297ba751aabbf3a44b499d1b116f6aff65c59aa794e31d4bb40"
        "7abd904055198271ea4909f50b3cad87c65de09ecfe40398c195248633d220867cb01a5034438cf604d403c0d2f5936030a4afec94cc17"
        "bb009b40aa09c3f2fa3711811d6f1709714347bf05a28434a6cedc5baa0072e253ca7230357ad9715b9139cfcb46793544c0952041d4b4"
        "1f105c578a3de183a1f0093ee2f07070d180730a203899a81101217862cfb8e3954368584695afc37a9d52901e66fb981455710456b819"
        "6b9bd677762c021392d0865eeb640f1539cf6ca1a08a7e5204676b311ac1392843193dfcab93f8d17c7350beeb1900518a4db3224766d2"
        "cb1ff42cbe189055c4449e97ce3bd2a80e745a574021c72234cc87b4991802427c0ce6c59c950218c96ca3409414267c006b8b7cbdd49d"
        "c2710ddb246f06207b59a9bee1118d18e379e2458c44d64b978b6d94972a177a17bbeb2085c683c4095b9176b61e8a6f3de251ada307f4"
        "6c56ef3a7d22b477633a3f1fd52dfa9904f61b0264184c0f24816cc3339b0a0d1182abd972ad77729a4d5016f101bad4c02b44b1c1c912"
        "bb2f963efb788aa336c491518f09f40b72ea8292328252f186d0719cba3a8528a8059c574cf874313f4a41ef63ae4cd630ba8b7485b0ce"
        "3b3898e62b9e7cb9be5a4c0c74919692a8996f4a09f95a0e8537325527c75df6b9b367c14c6867817a19c468a14da728b9dc4f2877369c"
        "7b10cc5972d71810d3719aade06f187533674c4026b767b6f75611027ca8868116211e953c00ac401f5940a1f17b0ac8c1450e02c580e7"
        "7a2f23a3acb11b8e53295a546bf5f40f87fac6a42bb200ed0a053c89556050e21c65f7290f68b2670381cc06d8aff43c962d122987c0ab"
        "57934dfc167ec8eb07546891eebaab4427097958bd19ca5650f42bac5890f781540f790501e63686d71c82f4c9ba739974fa0886ab4e32"
        "5673b3a1413f5aa63870b22d052596841cbb89a59c58087b09208d876d9587c492c268bc80129f860bc9e2218a060d299342cc44b25d26"
        "b7726a1a22d8c657d582162c2b99a41b1666a4870b88f032ba09318596cbbb9b8711622b436f68508734532b70ba414b6ffaf695ebe8c1"
        "e120215deaae438a2abc183cc50cbe397a5c00bd1498da324b9a159a30957ae32835781c52743d72876c860c1dcce37e0c0c8ff3c2b36a"
        "cb52ffab61dbb40cbe4b7a7e755a12d01ae7b95129f50cd7d494e290913d30013f99a4a15c2fcc5a03e1702e8575937cf752c3831150c9"
        "5b51d3676a08c070c454eff93c37947b14bc564594be715a7dea960c0250cb4d219036556c94f2cca7191db03c443970339d92cabc6601"
        "cfb31e7d46a94994af8bdb790e468b79491a237bc397f70000181299828f164799c7225000fa6ab542a2da301d7e0a105f80886f0c79f1"
        "a4bf85a0a33d21ac13008d259cc0a54520c48b438afc3b28379975c18b40e0b28ba6227674820990bac4f3c99f1c4932c59cfe726bfbb9"
        "67a7227ce9a00cce9b0647264d73d5c935161108549b5636caee3cb6ca47136a125372918d8bcc2994f23ddc1646948b288cb5707b4934"
        "d28cc719d0a98b323d05a5a444bbb47ee09aa8a0cf1e7b6eae14b5740987cb629cafb74144727d21a230ed456d8ed41f11eabd23623b51"
        "b520aae80a0807baaabba3fa755a9e12a92be7715c7c98ac6527b9e1a74c20abe1966c0f9c2086892e3e172c23ca9d63e73e8c085f2852"
        "c12e6a475b7218864a8da5503940a195b5b621ce085b3f7a398f99cfe10a1fd45178a4972964024f5f2242b0d60c53bb06f8db30e80652"
        "9b786c1a571241c55de0114e4f2a27090321b2e5b0bf5c95b2611b379025b1ca664bd4ab1c86049efc236e2b903e7cc80c1751ab946f3e"
        "c001a857926a2604e5ac3e0316912ed5606b08bfa9e82cb5e54a6d3a4978e1c32833a0c8f0102ab916d4979a840432df700192cb9efa30"
        "96abc446ae938432276f7d3b12237cc067387d4d31a0d8109bd2a51c69d8a0840b38ec474d8405038219969859540f938156802e729a9a"
        "7335378cf10ffd338956dbbd6a7380d8376b7239260e3b8f9f3769c720c7e1969ec7097b18746db674c0ea724e5443909a8b5ed4a5c9a4"
        "18ccf937634afc06feb832367b8c0d44135771bc14107f2a589816077536aa6cf25b3c11b969bcfa78270ca74a1a38c03566fb87810722"
        "276b691b8f51bb93184662b868a9159945771d40a23c750821c5e5530ed6a4df38ce27381448893cce9928f67691ea7b705dea7b15c89b"
        "9d0a19380987c22046a1a62df9480d6790b3ff4823851173c3330e92e8c10b021b12a31d36f2953ca9c1a6c510799634f637837ae12e7c"
        "52b435daac2cf451556809be3504c1b191d0b6aad9502258a1541c4c95986b7c2a0aa22d0b180350aeca7c840d298ff1b59b974b816eb3"
        "8fcaa7b805e07167e34c25236658c56624f03073414d6c794b24b19985c123aec7aa017c19202894905a11d484a829955382d992506333"
        "966c1428098be4ec9702681805d26193ab935d9077153b7b52012d38e522d8c1b1f23a3014629db6d6c747449bf5412fedc015236a3ea0"
        "03bd9c5296d67547ec4c1c107166f50263df890c531088e9d557e8e62b373c21d0c724b1f732c1dc202a34c6ae342087942c8034a45717"
        "bc70920cab1853552432d430b0021a51d0834876ba52205598a61372c6d48a18e841f6db19eb5ba57f86087c350eae351d4ba38678fc94"
        "20cb08e2d862b424ff2d56098fd50890b85d1130c97b1555ed7ebece6dac6d2ab22846bbab3a9a19e98f697cc6e08263641689dbbe1c3a"
        "1405d10ee38e793ff2c756df34322bf6853bd5867f32980974824b3e0df89b4237881e");
    const bytes c = from_hex(
        "00c77baf0a8c8a66376873139cbd94b7a528efab474501a1019d065ffca8641361251af7fe361a1c1cd2570ac64f67fa37379828a825ff"
        "c5d75044adfec86818652b3157cbfef80bcb6d70cabc16e0b8deb4e6f992c8373490725189118fc0df53a24531896a4a873e55f994bb9e"
        "685d98f38d0e6b0e13c13c3c2fbf919db5eaac31149a78d835a83b5c0122610746ba6587dd54e25383f19c019bab1c3f4393801ae47236"
        "75ad2489ef0e340ed199ce5868db18a805eb750c49e715826b6b4c017f50b829a976bc7aec666663ce62f131e0fd5c7087f66326308877"
        "f4950885f807f46745b1f003f7d74c08c638c293cabba2edd2c1e2004a791557641a87aec932c0e54615c859065fa0be7cfcbfea669553"
        "3117874c55939fc3c919d5326eec4fad95aaf2a01c66312e35d35369005d98560bd7a7763db0511ccd8f72ae59a8f0890167bb8428a292"
        "8b4a850561cb8588d629c8dd789d075c1b93e6a6d0f474515a20dafd55588b66e5067fa1f66df8351b4f589dd0115bd07b8c4d7acf186a"
        "fd75879d8ffbbe555959df6e2ae0d5c5d0f922a4439f9255d524c53906d0997a7df7a57f79e77363ca5c2df8db2c348fd7f2b75a5c7714"
        "f634d902060e260a4677544c452f9e90f4c5629a7adb230aea7176df1d67690bcc7de74580d7db707284dfc371498bb7e0167966f1afc9"
        "7acb195c04a2622555e138016b3ecf085ca0f3e75f8442168ff5c97998cb9f68944d10efbac2e9591b89179a1a045cc719d2c621623937"
        "6213d4e1284295e524c952fe1aa7787b473b82dead91dd4b724da82275e28a763b4de06fee9b1a8eab3967033cd9fc24dfe9a124362de9"
        "88eae7369801d9339026e5fd958183eaf2173ce9bcffaeb2b42c5bd096c2ff86a18865809ff2d49c7fc942a1675fced4961637c997f273"
        "78ddab949e548f692f0f0179b714d1a1c36b798c1a73af883553c9d04878e5927e13036a1d44837fb7d533a26aef429c40625a813ebfa0"
        "41c48a5582e76e5c894ccefdcfdab1866ea64fbbedcd309cdcff8477d0ff00d342930e88a6393099f165659e4e90cd156543027be51393"
        "df7cddfaf965bc8863c295b9a6af043e9ea7166443fd62d837528acca6f1b983037a6ad8f51f4f1f47f8034823cd679565ccd59cfc4280"
        "92ffd2c7bc88d414f6a9e3b71e9f8ae2b5151a54245b5f89f8ef841e18b87b1b205cc8bb1247d4f00119f3fa35d31f62b9e4efb08781ca"
        "dcde489895bcf29447ccf9da2142a52a8709e3e46de387b27d0d974b708d8de64bd1863098595088d88f757338df744c549f4ee84f3d87"
        "7c461497d5dd01efa0dbc46a1e8255001f50051f4a6b4a7b7e0a6dab50f59edf89ef11c14e8ef09a488ce7288e2cda39b0f36a5b004362"
        "e5aae833175785a3463470c982a6f995a08e0afad65225e3eb7da2d3cf4fcfe25fddbf67888230866feb6eb5f7c18b38158bcdd94d8d65"
        "6e7fcf9e45ac23b8e9ed56cb5397858e29856c5c7ee4cb440c3c92e52b455bc2466f2d0df8f231260ce733");
    REQUIRE(dk.size() == ml_kem768::decapsulation_key_bytes);
    REQUIRE(c.size() == ml_kem768::ciphertext_bytes);
    const auto k = must(ml_kem768::decaps(secret_bytes(dk), c));
    CHECK(hex(k) == "3776199a4a9dc4c731891e6b45da7b9324972df6f6cf61c99699f60e374bb561");
    CHECK(to_hex(rejection_key(dk, c)) == hex(k));
}

TEST_CASE("ml_kem768: key generation is deterministic in its seeds, and the sizes")
{
    const auto a = ml_kem768::key_gen_internal(seed(1), seed(2));
    const auto b = ml_kem768::key_gen_internal(seed(1), seed(2));
    CHECK(a.encapsulation_key.size() == ml_kem768::encapsulation_key_bytes);
    CHECK(a.decapsulation_key.size() == ml_kem768::decapsulation_key_bytes);
    CHECK(a.encapsulation_key == b.encapsulation_key);
    CHECK(hex(a.decapsulation_key) == hex(b.decapsulation_key));
    // d makes the key, z only the rejection secret at the end of dk.
    const auto c = ml_kem768::key_gen_internal(seed(1), seed(3));
    CHECK(c.encapsulation_key == a.encapsulation_key);
    CHECK(to_hex(c.decapsulation_key.span().first(2368)) == to_hex(a.decapsulation_key.span().first(2368)));
    CHECK(to_hex(c.decapsulation_key.span().last(32)) == to_hex(seed(3)));
    CHECK(ml_kem768::key_gen_internal(seed(4), seed(2)).encapsulation_key != a.encapsulation_key);

    CHECK_THROWS_AS(ml_kem768::key_gen_internal(bytes(31), seed(2)), std::invalid_argument);
    CHECK_THROWS_AS(ml_kem768::key_gen_internal(seed(1), bytes(33)), std::invalid_argument);
}

// Section 7.2: every 12-bit field of t-hat below q, the length exact.
TEST_CASE("ml_kem768: the encapsulation key check")
{
    const auto kp = ml_kem768::key_gen_internal(seed(7), seed(8));
    const bytes m = seed(9);
    REQUIRE(ml_kem768::encaps_internal(kp.encapsulation_key, m).has_value());

    constexpr std::size_t last = 3 * 256 - 1;
    for (const std::size_t index : {std::size_t{0}, std::size_t{1}, std::size_t{256}, std::size_t{511}, last}) {
        for (const std::uint16_t v : {std::uint16_t{3329}, std::uint16_t{3330}, std::uint16_t{4095}}) {
            CAPTURE(index);
            CAPTURE(v);
            bytes ek = kp.encapsulation_key;
            set_field12(ek, index, v);
            const auto r = ml_kem768::encaps_internal(ek, m);
            REQUIRE_FALSE(r.has_value());
            CHECK(r.error() == errc::invalid_argument);
        }
        // q - 1 and 0 are in range.
        for (const std::uint16_t v : {std::uint16_t{0}, std::uint16_t{3328}}) {
            bytes ek = kp.encapsulation_key;
            set_field12(ek, index, v);
            CHECK(ml_kem768::encaps_internal(ek, m).has_value());
        }
    }
    // rho, the last 32 bytes, is any string.
    bytes ek = kp.encapsulation_key;
    std::fill(ek.end() - 32, ek.end(), std::uint8_t{0xff});
    CHECK(ml_kem768::encaps_internal(ek, m).has_value());

    // Wrong lengths of ek and m.
    for (const std::size_t len : {std::size_t{0}, std::size_t{1183}, std::size_t{1185}, std::size_t{1152}}) {
        bytes e = kp.encapsulation_key;
        e.resize(len);
        const auto r = ml_kem768::encaps_internal(e, m);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == errc::invalid_argument);
    }
    CHECK(ml_kem768::encaps_internal(kp.encapsulation_key, bytes(31)).error() == errc::invalid_argument);
    CHECK(ml_kem768::encaps_internal(kp.encapsulation_key, bytes(33)).error() == errc::invalid_argument);
    CHECK(ml_kem768::encaps(bytes(1183)).error() == errc::invalid_argument);
}

TEST_CASE("ml_kem768: decapsulation refuses wrong lengths and a dk whose H(ek) does not match")
{
    const auto kp = ml_kem768::key_gen_internal(seed(10), seed(11));
    const auto enc = must(ml_kem768::encaps_internal(kp.encapsulation_key, seed(12)));

    for (const std::size_t len : {std::size_t{0}, std::size_t{1087}, std::size_t{1089}}) {
        bytes c = enc.ciphertext;
        c.resize(len);
        CHECK(ml_kem768::decaps(kp.decapsulation_key, c).error() == errc::invalid_argument);
    }
    for (const std::size_t len : {std::size_t{0}, std::size_t{2399}, std::size_t{2401}}) {
        bytes dk = to_bytes(kp.decapsulation_key.span());
        dk.resize(len);
        CHECK(ml_kem768::decaps(secret_bytes(dk), enc.ciphertext).error() == errc::invalid_argument);
    }
    // One bit of the stored ek (first and last byte), or of the stored hash.
    for (const std::size_t at : {std::size_t{1152}, std::size_t{2335}, std::size_t{2336}, std::size_t{2367}}) {
        CAPTURE(at);
        secret_bytes dk(kp.decapsulation_key);
        dk.data()[at] ^= 0x01;
        CHECK(ml_kem768::decaps(dk, enc.ciphertext).error() == errc::invalid_argument);
    }
    // dk_PKE and z are not covered by the check: a change there decapsulates
    // (to some other key).
    secret_bytes dk(kp.decapsulation_key);
    dk.data()[0] ^= 0x01;
    const auto k = must(ml_kem768::decaps(dk, enc.ciphertext));
    CHECK(k.size() == ml_kem768::shared_secret_bytes);
    CHECK(hex(must(ml_kem768::decaps(kp.decapsulation_key, enc.ciphertext))) == hex(enc.shared_secret));
}

// Algorithm 18's implicit rejection: a ciphertext that is not the
// re-encryption yields J(z || c), a key unrelated to the real one.
TEST_CASE("ml_kem768: implicit rejection of altered ciphertexts")
{
    const auto kp = ml_kem768::key_gen_internal(seed(20), seed(21));
    const auto enc = must(ml_kem768::encaps_internal(kp.encapsulation_key, seed(22)));
    const auto real = hex(enc.shared_secret);
    CHECK(hex(must(ml_kem768::decaps(kp.decapsulation_key, enc.ciphertext))) == real);
    CHECK(to_hex(rejection_key(kp.decapsulation_key, enc.ciphertext)) != real);

    for (const std::size_t bit : {std::size_t{0}, std::size_t{7}, std::size_t{4000}, std::size_t{7679},
                                  std::size_t{7680}, std::size_t{8703}}) {
        CAPTURE(bit);
        bytes c = enc.ciphertext;
        c[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
        const auto k = hex(must(ml_kem768::decaps(kp.decapsulation_key, c)));
        CHECK(k != real);
        CHECK(k == to_hex(rejection_key(kp.decapsulation_key, c)));
    }

    // A ciphertext with a zero byte early that differs from the real one only
    // in its last byte (what a strcmp would miss): find an m whose ciphertext
    // starts with a zero byte (one in 256).
    bool found = false;
    for (unsigned i = 0; i < 4096 && !found; ++i) {
        bytes m = seed(23);
        m[0] = static_cast<std::uint8_t>(i);
        m[1] = static_cast<std::uint8_t>(i >> 8);
        const auto e = must(ml_kem768::encaps_internal(kp.encapsulation_key, m));
        if (e.ciphertext[0] != 0)
            continue;
        found = true;
        bytes c = e.ciphertext;
        c.back() ^= 0x80;
        const auto k = hex(must(ml_kem768::decaps(kp.decapsulation_key, c)));
        CHECK(k != hex(e.shared_secret));
        CHECK(k == to_hex(rejection_key(kp.decapsulation_key, c)));
        CHECK(hex(must(ml_kem768::decaps(kp.decapsulation_key, e.ciphertext))) == hex(e.shared_secret));
    }
    CHECK(found);
}

TEST_CASE("ml_kem768: randomised key generation and encapsulation round trip")
{
    std::string previous;
    for (int i = 0; i < 4; ++i) {
        auto kp = ml_kem768::key_gen();
        REQUIRE(kp.has_value());
        CHECK(kp->encapsulation_key.size() == ml_kem768::encapsulation_key_bytes);
        CHECK(kp->decapsulation_key.size() == ml_kem768::decapsulation_key_bytes);
        CHECK(to_hex(kp->encapsulation_key) != previous);
        previous = to_hex(kp->encapsulation_key);
        const auto a = must(ml_kem768::encaps(kp->encapsulation_key));
        const auto b = must(ml_kem768::encaps(kp->encapsulation_key));
        CHECK(a.ciphertext.size() == ml_kem768::ciphertext_bytes);
        CHECK(a.shared_secret.size() == ml_kem768::shared_secret_bytes);
        CHECK(a.ciphertext != b.ciphertext);
        CHECK(hex(a.shared_secret) != hex(b.shared_secret));
        CHECK(hex(must(ml_kem768::decaps(kp->decapsulation_key, a.ciphertext))) == hex(a.shared_secret));
        CHECK(hex(must(ml_kem768::decaps(kp->decapsulation_key, b.ciphertext))) == hex(b.shared_secret));
    }
}
