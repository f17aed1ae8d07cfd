from usersim.cli import main

main()
