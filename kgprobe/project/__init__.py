"""Operations on a whole project config, above the suites and the generation stage: writing a starter project
(:mod:`kgprobe.project.init`, ``kgprobe init``) and what a run will ask and cost before it is paid for
(:mod:`kgprobe.project.plan`, ``kgprobe plan``; the generation assets ask it for each partition's prompts)."""
