// Driver: emulate CLR's HIPK path using ROCm's kpack runtime (kpack_load_code_object).
// Usage: kpack_driver <host-elf> <isa> [outdir]
//   For each 24-byte wrapper in .hipFatBinSegment: checks magic "HIPK", resolves the
//   wrapper's binary pointer (file value, or R_X86_64_RELATIVE addend from .rela.dyn),
//   maps it to file bytes (expected in .rocm_kpack_ref), and calls
//   kpack_load_code_object(cache, ptr, host_path, reserved1, {isa}, 1, ...).
//   Prints per wrapper: error code or size; optionally writes <outdir>/<index>.hsaco.
//   tools/rocm-kpack-runtime/run builds it against ROCm/rocm-kpack's runtime (a
//   developer-machine check: it fetches that repository).
#include <rocm_kpack/kpack.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

struct Shdr { uint32_t name, type; uint64_t flags, addr, offset, size; uint32_t link, info; uint64_t align, entsize; };
static uint16_t r16(const uint8_t* p){uint16_t v; memcpy(&v,p,2); return v;}
static uint32_t r32(const uint8_t* p){uint32_t v; memcpy(&v,p,4); return v;}
static uint64_t r64(const uint8_t* p){uint64_t v; memcpy(&v,p,8); return v;}

int main(int argc, char** argv) {
  if (argc < 3) { fprintf(stderr,"usage: %s <host-elf> <isa> [outdir]\n",argv[0]); return 2; }
  const char* host = argv[1]; const char* isa = argv[2]; const char* outdir = argc>3?argv[3]:nullptr;
  std::ifstream f(host, std::ios::binary);
  if (!f) { fprintf(stderr,"cannot open %s\n",host); return 2; }
  std::vector<uint8_t> d((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (d.size()<64 || memcmp(d.data(),"\x7f""ELF",4) || d[4]!=2 || d[5]!=1) { fprintf(stderr,"not ELF64LE\n"); return 2; }
  uint64_t shoff=r64(&d[0x28]); uint16_t shentsize=r16(&d[0x3a]), shnum=r16(&d[0x3c]), shstrndx=r16(&d[0x3e]);
  std::vector<Shdr> sh(shnum);
  for (int i=0;i<shnum;i++){ const uint8_t* p=&d[shoff+(uint64_t)i*shentsize];
    sh[i]={r32(p),r32(p+4),r64(p+8),r64(p+16),r64(p+24),r64(p+32),r32(p+40),r32(p+44),r64(p+48),r64(p+56)}; }
  auto name=[&](const Shdr& s){ return std::string((const char*)&d[sh[shstrndx].offset+s.name]); };
  int fatbin=-1, ref=-1;
  std::map<uint64_t,uint64_t> relative; // r_offset -> addend
  for (int i=0;i<shnum;i++){ std::string n=name(sh[i]);
    if (n==".hipFatBinSegment") fatbin=i;
    if (n==".rocm_kpack_ref") ref=i;
    if (sh[i].type==4 /*SHT_RELA*/) for (uint64_t o=0;o+24<=sh[i].size;o+=24){ const uint8_t* p=&d[sh[i].offset+o];
      if ((r64(p+8)&0xffffffff)==8 /*R_X86_64_RELATIVE*/) relative[r64(p)]=r64(p+16); } }
  if (fatbin<0 || ref<0) { fprintf(stderr,"missing .hipFatBinSegment or .rocm_kpack_ref\n"); return 2; }
  const Shdr& R=sh[ref];
  printf("host=%s isa=%s wrappers=%llu ref_section=[0x%llx,+0x%llx)\n",host,isa,
         (unsigned long long)(sh[fatbin].size/24),(unsigned long long)R.addr,(unsigned long long)R.size);
  kpack_cache_t cache=nullptr;
  if (kpack_cache_create(&cache)!=KPACK_SUCCESS){ fprintf(stderr,"cache_create failed\n"); return 2; }
  const char* arch_list[]={isa};
  int nok=0,nerr=0; std::map<int,int> errs;
  for (uint64_t o=0;o+24<=sh[fatbin].size;o+=24){
    const uint8_t* w=&d[sh[fatbin].offset+o];
    uint64_t waddr=sh[fatbin].addr+o;
    uint32_t ver=r32(w+4); uint64_t ptr=r64(w+8), idx=r64(w+16);
    if (memcmp(w,"HIPK",4)) { printf("wrapper@0x%llx: magic not HIPK\n",(unsigned long long)waddr); nerr++; continue; }
    if (ptr==0 && relative.count(waddr+8)) ptr=relative[waddr+8];
    if (ptr<R.addr || ptr>=R.addr+R.size) { printf("wrapper@0x%llx idx=%llu: ptr 0x%llx outside .rocm_kpack_ref\n",(unsigned long long)waddr,(unsigned long long)idx,(unsigned long long)ptr); nerr++; continue; }
    // Copy from ptr to end of section, padded with 64 KiB zeros (runtime parses with max 64 KiB).
    std::vector<uint8_t> meta(&d[R.offset+(ptr-R.addr)], &d[R.offset+R.size]); meta.resize(meta.size()+65536,0);
    void* co=nullptr; size_t sz=0;
    kpack_error_t e=kpack_load_code_object(cache,meta.data(),host,(uint32_t)idx,arch_list,1,&co,&sz);
    if (e!=KPACK_SUCCESS){ printf("wrapper idx=%llu ver=%u: error %d\n",(unsigned long long)idx,ver,(int)e); nerr++; errs[e]++; continue; }
    printf("wrapper idx=%llu ver=%u: size=%zu\n",(unsigned long long)idx,ver,sz);
    if (outdir){ std::string p=std::string(outdir)+"/"+std::to_string(idx)+".hsaco"; FILE* of=fopen(p.c_str(),"wb"); fwrite(co,1,sz,of); fclose(of); }
    kpack_free_code_object(co); nok++;
  }
  printf("summary: loaded=%d failed=%d",nok,nerr); for (auto& kv:errs) printf(" err%d=%d",kv.first,kv.second); printf("\n");
  kpack_cache_destroy(cache);
  return 0;
}
