from aidp.cli import main

main()
