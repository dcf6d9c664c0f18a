"""Hand-picked Hi-ToM stories (verbatim from Hi-ToM_data.json) and what they must give."""

from __future__ import annotations

# sample 0: three moves of the lettuce, back to where it started.
LETTUCE = """1 Avery, Charlotte, Isabella, Elizabeth and Owen entered the living_room.
2 The lettuce is in the green_drawer.
3 Avery moved the lettuce to the green_bathtub.
4 Elizabeth dislikes the tangerine.
5 Avery exited the living_room.
6 Charlotte moved the lettuce to the blue_pantry.
7 Owen likes the green_envelope.
8 Charlotte exited the living_room.
9 Isabella made no movements and stayed in the living_room for 1 minute.
10 Isabella exited the living_room.
11 Owen dislikes the green_pepper.
12 Elizabeth made no movements and stayed in the living_room for 1 minute.
13 Elizabeth exited the living_room.
14 Owen moved the lettuce to the green_drawer.
15 Owen exited the living_room.
16 Avery, Charlotte, Isabella, Elizabeth and Owen entered the waiting_room.
"""
LETTUCE_CHOICES = (
    "A. blue_drawer, B. green_crate, C. red_bucket, D. green_bottle, E. red_basket, "
    "F. blue_suitcase, G. green_treasure_chest, H. green_box, I. red_envelope, J. red_pantry, "
    "K. green_drawer, L. blue_pantry, M. green_envelope, N. blue_crate, O. green_bathtub"
)

# sample 2: four moves of the eggplant; the last returns it to the green_envelope.
EGGPLANT = """1 Liam, Jack, Hannah, Owen and Noah entered the pantry.
2 The eggplant is in the green_envelope.
3 Liam made no movements and stayed in the pantry for 1 minute.
4 Liam exited the pantry.
5 Noah lost his gloves.
6 Jack moved the eggplant to the green_bathtub.
7 Jack exited the pantry.
8 Hannah moved the eggplant to the blue_cupboard.
9 Hannah exited the pantry.
10 Owen moved the eggplant to the green_basket.
11 Owen exited the pantry.
12 Noah moved the eggplant to the green_envelope.
13 Noah exited the pantry.
14 Liam, Jack, Hannah, Owen and Noah entered the waiting_room.
"""
EGGPLANT_CHOICES = (
    "A. green_treasure_chest, B. blue_treasure_chest, C. red_crate, D. blue_drawer, "
    "E. green_pantry, F. green_envelope, G. green_bathtub, H. blue_cupboard, I. blue_container, "
    "J. green_basket, K. blue_bottle, L. green_drawer, M. red_box, N. red_pantry, O. red_envelope"
)

# sample 800 (Tell, three chapters): the peas of chapter 1 move twice; later chapters move
# other objects, and the claims after chapter 1 are testimony, not moves.
PEAS = """1 Logan, Jackson, Jack, Emily and Isabella entered the hallway.
2 The peas is in the blue_suitcase.
3 Logan made no movements and stayed in the hallway for 1 minute.
4 Logan exited the hallway.
5 Jackson made no movements and stayed in the hallway for 1 minute.
6 Jack likes the blue_crate.
7 Jackson exited the hallway.
8 Jack moved the peas to the red_crate.
9 Jack exited the hallway.
10 Emily moved the peas to the green_bottle.
11 Emily exited the hallway.
12 Isabella made no movements and stayed in the hallway for 1 minute.
13 Jackson dislikes the turnip.
14 Isabella exited the hallway.
15 Logan, Jackson, Jack, Emily and Isabella entered the waiting_room.
16 Emily publicly claimed that peas is in the blue_suitcase.
17 Isabella privately told Logan that the peas is in the green_bottle.
18 Isabella, Emily and Logan entered the attic.
19 The potato is in the green_drawer.
20 Isabella moved the potato to the red_basket.
21 Isabella exited the attic.
22 Emily moved the potato to the green_bathtub.
23 Logan moved the potato to the blue_crate.
24 Logan exited the attic.
25 Isabella, Emily and Logan entered the waiting_room.
"""

# sample 201 (three chapters): the onion moves again in chapter 3; Owen makes two of its three
# moves, so Owen and the first role already see everything between them.
ONION = """1 Emily, Charlotte, Owen, Nathan and Liam entered the attic.
2 The onion is in the blue_treasure_chest.
3 Emily made no movements and stayed in the attic for 1 minute.
4 Emily exited the attic.
5 Charlotte moved the onion to the green_treasure_chest.
6 Charlotte exited the attic.
7 Owen moved the onion to the red_drawer.
8 Owen exited the attic.
9 Nathan made no movements and stayed in the attic for 1 minute.
10 Nathan exited the attic.
11 Liam made no movements and stayed in the attic for 1 minute.
12 Liam exited the attic.
13 Nathan lost his gloves.
14 Emily, Charlotte, Owen, Nathan and Liam entered the waiting_room.
15 Emily, Charlotte and Liam entered the front_yard.
16 The lemon is in the red_bottle.
17 Emily moved the lemon to the blue_container.
18 Emily exited the front_yard.
19 Emily, Charlotte and Liam entered the waiting_room.
20 Charlotte, Owen, Liam and Nathan entered the attic.
21 The onion is in the red_drawer.
22 Owen moved the onion to the blue_bottle.
23 Owen exited the attic.
24 Charlotte, Owen, Liam and Nathan entered the waiting_room.
"""

# sample 3: the spinach is "moved" into the container it is already in.
SPINACH = """1 Evelyn saw a dog.
2 Noah, Emily, Avery, Evelyn and Mila entered the front_yard.
3 The spinach is in the green_bucket.
4 Noah made no movements and stayed in the front_yard for 1 minute.
5 Noah exited the front_yard.
6 Mila moved the spinach to the green_bucket.
7 Mila exited the front_yard.
8 Noah, Emily, Avery, Evelyn and Mila entered the waiting_room.
"""
