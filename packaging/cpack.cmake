# CPack: `cpack -G DEB` in a build folder (or `cmake --build BUILD --target package`) makes
# slipway_<version>_<arch>.deb with every installed file: slipway, slipway-engine when it was built, the
# desktop entry, the icon, presets and the demo. Dependencies come from dpkg-shlibdeps on the binaries.
set(CPACK_PACKAGE_NAME slipway)
set(CPACK_PACKAGE_VENDOR "Slipway")
set(CPACK_PACKAGE_CONTACT "Slipway developers <dev@slipway.local>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Fine-tune LLMs on Slurm GPU clusters: Qt desktop workbench and LibTorch training engine")
set(CPACK_PACKAGE_DESCRIPTION
    "Slipway edits run configs (HF TrainingArguments / PEFT fields), submits them to Slurm clusters over SSH or "
    "runs them on this computer, and follows MLLOG training logs live with a history of every run. "
    "slipway-engine is the LibTorch trainer the jobs run (LLaMA family, LoRA, embeddings-only, full).")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Qt's own translations (qtbase_ru.qm: the standard dialogs' buttons); the app's are compiled in.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-translations-l10n")
set(CPACK_STRIP_FILES ON)
include(CPack)
